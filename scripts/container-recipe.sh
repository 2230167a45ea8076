#!/usr/bin/env bash
# Proves the Dockerfile's recipe where no Docker engine runs. In a temporary directory it clones the committed
# repository (HEAD, without uncommitted work), builds the Docker build context through .dockerignore, replays
# the Dockerfile (the build stage's COPY and RUN lines, the final stage's COPY lines) on the Node.js major of
# the base image, then runs the assembled final file set as the image would: the image's ENV, its numeric
# USER (when this script runs as root), its CMD and its HEALTHCHECK command. It checks the file set, one
# start on the embedded database and, when DATABASE_URL is given, one on a fresh PostgreSQL database behind
# the one-shot migration, with a real API call, readiness, metrics and a graceful SIGTERM each time.
#
# The Dockerfile is read, not copied: an instruction this script does not understand stops it, so the two
# cannot drift apart silently. Change them together (see the comments in the Dockerfile).
#
#   bash scripts/container-recipe.sh
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
#     bash scripts/container-recipe.sh
#
# Optional: RECIPE_REPO (repository to clone, default this one), RECIPE_NODE=image|host (default image: the
# Node.js of .node-version, which must have the base image's major, from the npm registry package
# node-linux-<arch> through scripts/pinned-node.sh), HEALTH_PATH (default /health), RECIPE_KEEP=1 (keep the
# temporary directory), RECIPE_STEP_TIMEOUT (seconds per build step, 600).
# Needs git, node, npm, tar, setpriv (when root), script(1) (optional) and psql (with DATABASE_URL). Prints
# PASS/FAIL/SKIP lines and a closing "container recipe: PASS|FAIL" line; exits 1 on any failure.
#
# The parts, in scripts/container-recipe/: report.sh (PASS/FAIL lines, timings, summary), cleanup.sh (the
# temporary directory and the EXIT trap), build.sh (clone, context, Node.js, replay), image.sh (USER, ENV,
# CMD; starting the server), fileset.sh (checks of the final file set), runs.sh (the runs and their checks),
# and helper.mjs with its modules (the Node.js side: Dockerfile reader, .dockerignore, replay, HTTP client).
# Lint: shellcheck -x scripts/container-recipe.sh scripts/container-recipe/*.sh; the .mjs files: npm run lint.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
umask 022 # as in a Docker build: files readable by the service user, writable by root only

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
parts=$here/container-recipe
root=$(cd "$here/.." && pwd)
repo=${RECIPE_REPO:-$root}
health_path=${HEALTH_PATH:-/health}
step_timeout=${RECIPE_STEP_TIMEOUT:-600}
admin_url=${DATABASE_URL:-}
redis_url=${REDIS_URL:-}
helper=$parts/helper.mjs

# shellcheck source=container-recipe/report.sh
source "$parts/report.sh"
# shellcheck source=container-recipe/cleanup.sh
source "$parts/cleanup.sh"
# shellcheck source=container-recipe/build.sh
source "$parts/build.sh"
# shellcheck source=container-recipe/image.sh
source "$parts/image.sh"
# shellcheck source=container-recipe/fileset.sh
source "$parts/fileset.sh"
# shellcheck source=container-recipe/runs.sh
source "$parts/runs.sh"

open_workspace
timed "clone and context" clone_and_make_context
timed "Node.js for the base image" use_base_image_node
timed "image build (npm ci, build, prune, copies)" replay_dockerfile
read_final_stage
choose_service_user
check_file_set
timed "[embedded] whole run" run_embedded
if [[ -n $admin_url ]]; then
  timed "[postgres] whole run, with migration and CLI" run_postgres
else
  skip "PostgreSQL run (set DATABASE_URL to a server where a database may be created)"
fi
if command -v script >/dev/null; then
  timed "[embedded, second start, terminal] whole run" run_terminal
else
  skip "second start under a terminal (no script(1))"
fi
exit 0 # the summary and the exit code come from cleanup
