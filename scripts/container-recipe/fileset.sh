# shellcheck shell=bash
# Checks of the final file set the replay assembled: production packages only, the built app and its
# migrations without sources, read-only for the service user but for DATA_DIR, and an admin CLI that finds
# dist/ up to date.
# Uses helper (the entry point), tmp (cleanup.sh), app, data and image (build.sh), user and as_user (image.sh).
# shellcheck disable=SC2015,SC2154 # pass and fail always succeed; globals of earlier parts, listed above

check_file_set() {
  [[ $(node "$helper" get "$image" dataDirOwner) == "$user" ]] && pass "DATA_DIR is created owned by USER ($user)" ||
    fail "the final stage must create DATA_DIR owned by USER ($user)"
  check_packages
  check_app_files
  if [[ ${#as_user[@]} -gt 0 ]]; then check_permissions; fi
  check_admin_cli
}

check_packages() {
  local out package
  if out=$(node "$helper" modules "$app" "$tmp/src/package-lock.json"); then pass "node_modules: $out"; else
    fail "node_modules does not match the production dependencies:"; printf '%s\n' "$out"
  fi
  for package in tap typescript prisma @prisma/engines tsx @biomejs/biome; do
    [[ ! -e $app/node_modules/$package ]] && pass "$package is absent" || fail "$package (development) is in the final file set"
  done
  for package in @prisma/client @electric-sql/pglite fastify pg; do
    [[ -e $app/node_modules/$package/package.json ]] && pass "$package is present" || fail "$package is missing"
  done
}

check_app_files() {
  local path
  for path in dist/server.js dist/cli/main.js dist/.build-stamp bin/rubrica.js scripts/build-if-needed.js package.json; do
    [[ -f $app/$path ]] && pass "$path is present" || fail "$path is missing"
  done
  [[ -n $(find "$app/prisma/migrations" -name migration.sql 2>/dev/null) ]] && pass "prisma/migrations holds the migrations" ||
    fail "no migrations under prisma/migrations"
  [[ ! -e $app/src && ! -e $app/test && ! -e $app/node_modules/.cache ]] && pass "no sources, tests or build caches in the final file set" ||
    fail "sources, tests or node_modules/.cache reached the final file set"
}

# Only when running as the service user (as root): ownership means nothing otherwise.
check_permissions() {
  local writable
  writable=$("${as_user[@]}" find "$app" -writable -print 2>/dev/null | head -n 5 || true)
  [[ -z $writable ]] && pass "nothing under the app directory is writable by $user" ||
    fail "writable by $user: $writable"
  "${as_user[@]}" test -w "$data" && pass "DATA_DIR is writable by $user" || fail "DATA_DIR is not writable by $user"
}

check_admin_cli() {
  local help_err=$tmp/cli-help.err
  if in_image node bin/rubrica.js --help >/dev/null 2>"$help_err" && ! grep -q building "$help_err"; then
    pass "the admin CLI runs and finds dist/ up to date (no rebuild attempted)"
  else
    fail "the admin CLI: $(head -c 400 "$help_err")"
  fi
}
