# shellcheck shell=bash
# The build: the committed sources cloned, the Docker build context made through .dockerignore, the base image's
# Node.js put first on PATH, and the Dockerfile replayed (helper.mjs build): the build stage's COPY and RUN lines
# run in $tmp/stages, the final stage's COPY lines assemble $app, its RUN line creates $data (DATA_DIR), and its
# settings land in $image (JSON).
# Uses root, repo, step_timeout and helper (the entry point), tmp (cleanup.sh); sets node_bin, app, data and image.
# shellcheck disable=SC2154 # globals of the entry point and earlier parts, listed above

clone_and_make_context() {
  local files
  note "cloning $repo (HEAD; uncommitted changes are not part of the recipe)"
  timeout 300 git clone --quiet --no-local "$repo" "$tmp/src" || die "git clone of $repo"
  note "commit $(git -C "$tmp/src" log -1 --format='%h %s' | cut -c1-100)"
  [[ -f $tmp/src/Dockerfile ]] || die "no Dockerfile in the committed tree"
  mkdir "$tmp/context"
  files=$(node "$helper" context "$tmp/src" "$tmp/context") || die "the build context could not be made"
  pass "build context: $files committed files pass .dockerignore"
}

# The build and the runs use the base image's Node.js, unless RECIPE_NODE=host; sets node_bin. The exact version
# is .node-version's (the one CI tests), which must have the base image's major: the Dockerfile's ARG cannot read
# the file, so a change to one without the other stops here (and in test/node-versions.test.ts).
use_base_image_node() {
  local base major pinned
  base=$(node "$helper" base "$tmp/src/Dockerfile")
  major=$(sed -n 's/^node:\([0-9][0-9]*\).*/\1/p' <<<"$base")
  node_bin=$(dirname "$(command -v node)")
  if [[ ${RECIPE_NODE:-image} == image && -n $major ]]; then
    pinned=$(tr -d '[:space:]' <"$tmp/src/.node-version") || die "no .node-version in the committed tree"
    [[ ${pinned%%.*} == "$major" ]] || die "the base image $base is Node.js $major, .node-version pins $pinned"
    mkdir "$tmp/node"
    if ! node_bin=$(bash "$root/scripts/pinned-node.sh" "$tmp/node" "$pinned"); then
      node_bin=$(dirname "$(command -v node)")
      warn "could not fetch Node.js $pinned from the npm registry; using this machine's $(node --version)"
    fi
  fi
  export PATH="$node_bin:$PATH"
  note "base image $base; building and running with Node.js $(node --version) (npm $(npm --version 2>/dev/null))"
}

replay_dockerfile() {
  app=$tmp/app
  data=$tmp/data
  image=$tmp/image.json
  node "$helper" build "$tmp/src/Dockerfile" "$tmp/context" "$tmp/stages" "$app" "$data" "$step_timeout" "$image" ||
    die "the Dockerfile's build could not be replayed (see above)"
  pass "Dockerfile replayed: build stage run, final file set assembled in $(du -sh "$app" | cut -f1)"
}
