#!/usr/bin/env bash
# Mutation testing of the security core with gremlins (make mutate; see
# docs/testing.md). Each package is mutated on its own: only the files
# listed below are mutated, and each mutant runs only that package's tests
# (narrowed by a -run pattern where the whole suite is slow: metasrv).
# Reports go to $MUTATE_REPORT: <pkg>.log and <pkg>.json from gremlins, summary.txt with
# the score of each package (surviving mutants listed in the table of
# equivalent mutants in docs/testing.md are set apart).
#
# Environment: GREMLINS (the binary), MUTATE_REPORT (report directory),
# MUTATE_PKGS (a subset of the packages below, space-separated),
# MUTATE_WORKERS (parallel mutants, default 2), MUTATE_FILES (a regexp over
# file names that replaces the list below for every package run: one file's
# mutants after a change to it), MUTATE_SUMMARY_ONLY=1 (score
# the logs already in MUTATE_REPORT again, without running gremlins: after
# editing the table of equivalent mutants).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gremlins="${GREMLINS:-$root/bin/gremlins}"
report="${MUTATE_REPORT:-$root/bin/mutate}"
workers="${MUTATE_WORKERS:-2}"
equivalent="$root/docs/testing.md"

# package → files to mutate (an anchored regexp over the file name).
declare -A files=(
	[authz]='(authenticator|context|ids|jwt|principal|principalmap|principals|provider|reason|token)\.go'
	[authz/sqlgate]='(policy|funcs)\.go'
	[catalog]='(decide|snapshot|privilege|roles|versions|entity)\.go'
	[flight]='(planner_tables|payload|tables|discovery|admission|auth)\.go'
	[flight/ticket]='(ticket|claims)\.go'
	[flight/metacatalog]='(catalog|decisions)\.go'
	[stage]='(key|layout|local|s3|store)\.go'
	[metasrv]='delegation\.go'
)
# package → tests each mutant runs (go test -run; unset: all of them).
declare -A tests=(
	[metasrv]='^Test(Delegation|Resolve)'
)
order=(authz flight/ticket stage flight/metacatalog flight catalog authz/sqlgate metasrv)
pkgs=(${MUTATE_PKGS:-${order[@]}})

mkdir -p "$report"
rm -f "$report/lived.txt"
summary="$report/summary.txt"
{
	echo "make mutate, $(date -u +%Y-%m-%dT%H:%MZ), gremlins $(go version -m "$gremlins" | awk '$1 == "mod" { print $3 }'), $workers workers on $(nproc) CPUs"
	printf '%-20s %6s %6s %6s %6s %6s %8s %8s\n' package killed t/out lived equiv uncov score seconds
} >"$summary"

failed=""
for pkg in "${pkgs[@]}"; do
	if [ -z "${files[$pkg]+x}" ]; then
		echo "mutate: unknown package $pkg (known: ${order[*]})" >&2
		exit 2
	fi
	name="${pkg//\//_}"
	mutated="${MUTATE_FILES:-${files[$pkg]}}"
	# Exclude subpackages and every file outside the package's list.
	excl=(-E '/')
	for f in "$root/$pkg"/*.go; do
		f="$(basename "$f")"
		case "$f" in *_test.go) continue ;; esac
		if ! [[ "$f" =~ ^${mutated}$ ]]; then
			excl+=(-E "^${f//./\\.}\$")
		fi
	done
	# -count=1: gremlins times each mutant's tests against its coverage
	# run; a cached coverage run would make that limit a fraction of a
	# second and report every slow mutant as timed out.
	goflags="-tags=duckdb_arrow -count=1"
	if [ -n "${tests[$pkg]+x}" ]; then
		goflags="$goflags -run=${tests[$pkg]}"
	fi
	if [ -z "${MUTATE_SUMMARY_ONLY:-}" ]; then
		echo "== $pkg: mutating $mutated ($goflags)"
		start=$(date +%s)
		if ! (cd "$root/$pkg" && GOFLAGS="$goflags" "$gremlins" unleash --tags duckdb_arrow \
			--workers "$workers" --timeout-coefficient 20 --invert-logical --invert-loopctrl \
			"${excl[@]}" --output "$report/$name.json") >"$report/$name.log" 2>&1; then
			echo "== $pkg: gremlins failed, see $report/$name.log"
			failed="$failed $pkg"
			continue
		fi
		echo $(($(date +%s) - start)) >"$report/$name.seconds"
	elif [ ! -f "$report/$name.log" ]; then
		continue
	fi
	secs=$(cat "$report/$name.seconds" 2>/dev/null || echo 0)
	# The log holds progress output too: read it as text (-a).
	count() { grep -ac "^ *$1 " "$report/$name.log" || true; }
	killed=$(count KILLED)
	timedout=$(count 'TIMED OUT')
	uncovered=$(count 'NOT COVERED')
	equiv=0
	lived=0
	while read -r _ kind _ pos; do
		# A row of the table: | `pkg/file.go:line:col` | KIND | reason |
		if grep -qF "| \`$pkg/$pos\` | $kind |" "$equivalent" 2>/dev/null; then
			equiv=$((equiv + 1))
		else
			lived=$((lived + 1))
			echo "   LIVED $kind $pkg/$pos" >>"$report/lived.txt"
		fi
	done < <(grep -a '^ *LIVED ' "$report/$name.log" | sed 's/^ *//')
	total=$((killed + timedout + lived))
	score=$(awk -v k=$((killed + timedout)) -v t=$total 'BEGIN { if (t == 0) print "-"; else printf "%.1f%%", 100 * k / t }')
	printf '%-20s %6d %6d %6d %6d %6d %8s %8d\n' "$pkg" "$killed" "$timedout" "$lived" "$equiv" "$uncovered" "$score" "$secs" >>"$summary"
	echo "== $pkg: $score ($killed killed, $timedout timed out, $lived lived, $equiv equivalent, $uncovered not covered) in ${secs}s"
done
if [ -f "$report/lived.txt" ]; then
	echo "surviving mutants (not listed as equivalent):" >>"$summary"
	sort -u "$report/lived.txt" >>"$summary"
	rm "$report/lived.txt"
fi
cat "$summary"
if [ -n "$failed" ]; then
	echo "mutate: gremlins failed for:$failed" >&2
	exit 1
fi
