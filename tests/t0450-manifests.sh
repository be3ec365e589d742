#!/bin/bash
# Manifests: a comparison is tied to builds, not to one file. An agent's
# case program that is a wrapper script, byte for byte the same in every
# build, while the binary it runs differs: each arm's manifest (the build's
# commit, tree, recipe and every artifact) tells the builds apart, in the
# receipts, the lists and /api/v1/cells, which does not pool two such
# comparisons. perfd pair by hand: one program in both arms, told apart by
# the files named with --old-file and --new-file; the options' errors.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"
need git cc curl

# ---- the agent: a wrapper identical in every commit ----
new_src
cat >"$SRC/run.sh" <<'SH'
#!/bin/sh
exec "$(dirname "$0")/work" "$@"
SH
chmod +x "$SRC/run.sh"
work_prog "$SRC/work.c" 4000000 7
git -C "$SRC" add -A && git -C "$SRC" commit -qm "base: 4M rounds"
C1=$(git -C "$SRC" rev-parse HEAD)
work_prog "$SRC/work.c" 2000000 7
git -C "$SRC" commit -qam "2M rounds"
C2=$(git -C "$SRC" rev-parse HEAD)
cat >agent.conf <<CONF
$(agent_repo)

[build]
command = cc -O1 -o work work.c
artifacts = work run.sh
timeout_s = 60

# A/As would be comparisons of one manifest: none here.
[calibration]
runs = 0

[case wrapped]
command = ./run.sh
pairs = 3
max_pairs = 12
warmup = 0
CONF
check "agent --once, the first head" run 0 "$PERFD" agent --config agent.conf --once
work_prog "$SRC/work.c" 1000000 7
git -C "$SRC" commit -qam "1M rounds"
C3=$(git -C "$SRC" rev-parse HEAD)
check "agent --once, the second head" run 0 "$PERFD" agent --config agent.conf --once
check "the wrapper is one file in both commits" eq "$(git -C "$SRC" rev-parse "$C1:run.sh")" "$(git -C "$SRC" rev-parse "$C3:run.sh")"
ca=$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2'")
cb=$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C3'")
check "two comparisons" test -n "$ca" -a -n "$cb"
wsha=$(sha256sum "$SRC/run.sh" | cut -d' ' -f1)
check "every arm ran the same program" eq "$wsha $wsha $wsha $wsha" "$(sql "select group_concat(o.sha256 || ' ' || n.sha256, ' ') from comparisons c join artifacts o on o.id = c.old_artifact join artifacts n on n.id = c.new_artifact where c.id in ($ca, $cb)")"
check "each faster" eq "faster faster" "$(sql "select group_concat(verdict, ' ') from comparisons where id in ($ca, $cb)")"

check "the first receipt" run 0 "$PERFD" show --db "$DB" --json "$ca"
cp out a.json
check "the second receipt" run 0 "$PERFD" show --db "$DB" --json "$cb"
cp out b.json
ma_old=$(js a.json 'd["old"]["manifest"]')
ma_new=$(js a.json 'd["new"]["manifest"]')
mb_old=$(js b.json 'd["old"]["manifest"]')
mb_new=$(js b.json 'd["new"]["manifest"]')
check "a receipt shows each arm's manifest, whole" test "${#ma_old}" = 64 -a "${#ma_new}" = 64
check "one program, two manifests in a comparison" test "$ma_old" != "$ma_new"
check "two comparisons of three builds, three manifests" eq 3 "$(printf '%s\n' "$ma_old" "$ma_new" "$mb_old" "$mb_new" | sort -u | wc -l)"
check "the head of the first is the base of the second: one build, one manifest" eq "$ma_new" "$mb_old"
check "as stored" eq "$ma_old $ma_new" "$(sql "select old_manifest || ' ' || new_manifest from comparisons where id = $ca")"
hb=$(sql "select head_build from comparisons where id = $ca")
check "the manifest is its build's" eq "$hb $C2 $(git -C "$SRC" rev-parse "$C2^{tree}")" "$(sql "select build_id || ' ' || commit_oid || ' ' || tree_oid from manifests where hash = '$ma_new'")"
check "with the recipe's hash" eq 64 "$(sql "select length(recipe_hash) from manifests where hash = '$ma_new'")"
check "and every artifact, the wrapper's hash among them" eq "run.sh $wsha work $(sha256sum "$(sql "select dir from builds where id = $hb")/work" | cut -d' ' -f1)" "$(sql "select group_concat(name || ' ' || sha256, ' ') from (select name, sha256 from manifest_files where manifest = '$ma_new' order by name)")"
# The hash is the sha256 of the canonical text of docs/protocol.md.
lines=$(sql "select 'commit ' || commit_oid from manifests where hash = '$ma_new' union all
	select 'tree ' || tree_oid from manifests where hash = '$ma_new' union all
	select 'recipe ' || recipe_hash from manifests where hash = '$ma_new' union all
	select 'file ' || name || ' ' || size || ' ' || sha256 from manifest_files where manifest = '$ma_new'")
check "its hash is that of its canonical text" eq "$ma_new" "$( { echo perfd-manifest/1; printf '%s\n' "$lines" | LC_ALL=C sort; } | sha256sum | cut -d' ' -f1)"
check "the text receipt shows both" run 0 "$PERFD" show --db "$DB" "$ca"
check "  the old arm's" has out "     manifest $ma_old"
check "  the new arm's" has out "     manifest $ma_new"
check "the Markdown receipt, short" run 0 "$PERFD" show --db "$DB" --format md "$ca"
check "  in the arms' table" has out "| \`$wsha\` | \`${ma_new:0:12}\` |"
check "the CSV, whole" run 0 "$PERFD" show --db "$DB" --format csv "$ca"
check "  on every process" eq 24 "$(grep -c ",$ma_old,$ma_new," out)"
check "perfd list shows them, short" run 0 "$PERFD" list --db "$DB"
check "  the second comparison's" has out "${mb_old:0:12} ${mb_new:0:12}"

# The hub: the list has them whole, the cells pool neither with the other.
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
srv=$!
kill_at_exit srv
URL=$(served "$T/serve.err")
check "the hub serves" test -n "$URL"
api() { curl -s -o "$T/body" -w '%{http_code}' "$URL$1"; }
check "/api/v1/comparisons" eq 200 "$(api "/api/v1/comparisons")"
check "  each with its manifests" eq "$mb_old $mb_new $ma_old $ma_new" "$(js "$T/body" '" ".join(c["old_manifest"] + " " + c["new_manifest"] for c in d["comparisons"])')"
check "/api/v1/cells" eq 200 "$(api "/api/v1/cells?case=wrapped")"
check "  two cells of one comparison each, not one of two" eq "2: $ca $cb" "$(js "$T/body" '"%d: " % len(d["cells"]) + " ".join(str(c["id"]) for x in sorted(d["cells"], key=lambda x: x["comparisons"][0]["id"]) for c in x["comparisons"])')"
check "  each named by its manifests" eq "$ma_old $ma_new" "$(js "$T/body" '[x["old_manifest"] + " " + x["new_manifest"] for x in d["cells"] if x["comparisons"][0]["id"] == '"$ca"'][0]')"
check "  though their programs are one" eq "$wsha" "$(js "$T/body" '" ".join(sorted(set(x[k] for x in d["cells"] for k in ("old_sha256", "new_sha256"))))')"
check "a manifest from the hub" eq 200 "$(api "/api/v1/manifests/$ma_old")"
check "  is the base build's" eq "$(sql "select base_build from comparisons where id = $ca") $C1" "$(js "$T/body" '"%d %s" % (d["build"], d["commit"])')"

# ---- perfd pair: one program, different files ----
mkdir a b c
printf 'shader one\n' >a/kernel.spv
printf 'shader two\n' >b/kernel.spv
cp a/kernel.spv c/kernel.spv
printf 'doc\n' >input.txt
P="--old 10,10,10 --new 9,9,9"
pair() { "$PERFD" pair --db "$DB" --json --quiet --host-name laptop --case shaders "$@" >"$T/pair.json" 2>"$T/pair.err"; }
check "one program, different shaders" pair --file input.txt --old-file a/kernel.spv --new-file b/kernel.spv "$PLANT" "$PLANT" -- $P
p1=$(js pair.json 'd["comparison"]')
check "  one program in both arms" eq "$(js pair.json 'd["old"]["sha256"]')" "$(js pair.json 'd["new"]["sha256"]')"
check "  two manifests" test "$(js pair.json 'd["old"]["manifest"]')" != "$(js pair.json 'd["new"]["manifest"]')"
check "  not called an A/A comparison" eq 0 "$(grep -c 'A/A' pair.err)"
pm=$(js pair.json 'd["new"]["manifest"]')
check "  the new arm's manifest: the program, the shared file, its own" eq "input.txt kernel.spv $(basename "$PLANT")" "$(sql "select group_concat(name, ' ') from (select name from manifest_files where manifest = '$pm' order by name)")"
check "  its own file's bytes" eq "$(sha256sum b/kernel.spv | cut -d' ' -f1)" "$(sql "select sha256 from manifest_files where manifest = '$pm' and name = 'kernel.spv'")"
check "  no build" eq "||" "$(sql "select coalesce(build_id, '') || '|' || coalesce(commit_oid, '') || '|' || coalesce(tree_oid, '') from manifests where hash = '$pm'")"
check "the same files again" pair --file input.txt --old-file a/kernel.spv --new-file b/kernel.spv "$PLANT" "$PLANT" -- $P
p2=$(js pair.json 'd["comparison"]')
check "  the same manifests" eq "$pm" "$(js pair.json 'd["new"]["manifest"]')"
check "the same bytes under another directory" pair --file input.txt --old-file a/kernel.spv --new-file c/kernel.spv "$PLANT" "$PLANT" -- $P
p3=$(js pair.json 'd["comparison"]')
check "  one manifest for both arms" eq "$(js pair.json 'd["old"]["manifest"]')" "$(js pair.json 'd["new"]["manifest"]')"
check "/api/v1/cells of the shaders" eq 200 "$(api "/api/v1/cells?host=laptop&case=shaders")"
check "  the replication pools, the other files do not" eq "$p1,$p2|$p3" "$(js "$T/body" '"|".join(",".join(str(c["id"]) for c in x["comparisons"]) for x in sorted(d["cells"], key=lambda x: x["comparisons"][0]["id"]))')"
kill -TERM "$srv"
wait "$srv"

stored=$(sql "select count(*) from comparisons")
check "a file that is not there" run 2 "$PERFD" pair --db "$DB" --new-file missing.spv "$PLANT" "$PLANT"
check "  is named, with its option" has err "--new-file: cannot read 'missing.spv': No such file or directory"
check "a directory" run 2 "$PERFD" pair --db "$DB" --file a "$PLANT" "$PLANT"
check "  is refused" has err "--file 'a': not a regular file"
check "two files of one name in an arm" run 2 "$PERFD" pair --db "$DB" --file a/kernel.spv --old-file b/kernel.spv "$PLANT" "$PLANT"
check "  are refused" has err "OLD: manifest: two files named 'kernel.spv'"
many=$(for i in $(seq 65); do printf -- '--file input.txt '; done)
check "65 files for an arm" run 2 "$PERFD" pair --db "$DB" $many "$PLANT" "$PLANT"
check "  are too many" has err "more than 64 files for one arm"
check "an empty path" run 2 "$PERFD" pair --db "$DB" --old-file "" "$PLANT" "$PLANT"
check "  is refused" has err "--old-file: a path is expected"
check "nothing was run for them" eq "$stored" "$(sql "select count(*) from comparisons")"
finish
