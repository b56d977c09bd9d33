#!/usr/bin/env bash
# Docs a reader can follow: every ADR the tree cites has a page that says what it decided.
#   (a) An ADR number cited under src/ include/ docs/ tests/ examples/ bench/ fuzz/ or in
#       README.md needs a row "| NNNN | ... |" in docs/record.md, unless docs/adr/NNNN-*.md
#       exists (then it is Loom's own ADR). Extra rows in docs/record.md are allowed.
#   (b) Every docs/adr/NNNN-*.md starts with the title line "# ADR NNNN: Title", one blank
#       line and the status line "Status: Accepted" (or Proposed, Rejected, Deprecated,
#       "Superseded by NNNN"), states no other status, and has the row
#       "| [NNNN](file) | Title | Status |" in docs/adr/README.md.
# Usage: check_docs.sh <repository root>. Exits 0 when all hold; otherwise prints each problem
# (the number or the file) and exits 1.
set -euo pipefail

root=${1:?usage: check_docs.sh <repository root>}
cd "$root"
record=docs/record.md
index=docs/adr/README.md
failed=0
problem() {
  printf 'check_docs: %s\n' "$*" >&2
  failed=1
}

[[ -f $record ]] || problem "$record is missing"
[[ -f $index ]] || problem "$index is missing"

# (a) Citations. Forms: "ADR NNNN", "ADR-NNNN", "ADRs NNNN/NNNN", "ADR NNNN / NNNN, NNNN", and
# "ADR" ending a line of a comment or string whose next line starts with the number (each file
# is read as one line, so the line break is a space).
cite='ADRs?[-[:space:]"/#]*0[0-9]{3}([[:space:]]*(/|,|and|or)[[:space:]]*0[0-9]{3})*'
paths=()
for p in src include docs tests examples bench fuzz README.md; do
  [[ -e $p ]] && paths+=("$p")
done
citations=""  # lines "NNNN file"
if ((${#paths[@]} > 0)); then
  while IFS= read -r file; do
    numbers=$(tr '\n' ' ' <"$file" | { grep -oE "$cite" || true; } | grep -oE '0[0-9]{3}' |
      sort -u || true)
    for n in $numbers; do
      citations+="$n $file"$'\n'
    done
  done < <(grep -rlIE 'ADR' -- "${paths[@]}" | sort || true)
fi

for n in $(printf '%s' "$citations" | awk 'NF {print $1}' | sort -u); do
  own=(docs/adr/"$n"-*.md)
  [[ -e ${own[0]} ]] && continue
  if ! grep -sqE "^\| *(ADR )?$n *\|" "$record"; then
    files=$(printf '%s' "$citations" | awk -v n="$n" '$1 == n {print $2}' | paste -sd ' ' -)
    problem "ADR $n is cited but has no row in $record (cited in: $files)"
  fi
done

# (b) Loom's own ADRs: the one title and status format, and a row in the index.
status_re='^Status: (Accepted|Proposed|Rejected|Deprecated|Superseded by [0-9]{4})$'
any_status_re='^[[:space:]]*([-*][[:space:]]*)?(\*\*)?status(\*\*)?[[:space:]]*:|^#+[[:space:]]*status[[:space:]]*$'
for file in docs/adr/[0-9][0-9][0-9][0-9]-*.md; do
  [[ -e $file ]] || continue
  base=${file##*/}
  n=${base:0:4}
  line1=$(sed -n 1p "$file")
  line2=$(sed -n 2p "$file")
  line3=$(sed -n 3p "$file")
  title_re="^# ADR $n: (.+)\$"
  title=""
  if [[ $line1 =~ $title_re ]]; then
    title=${BASH_REMATCH[1]}
  else
    problem "$file: line 1 must be the title line '# ADR $n: Title'; found: '$line1'"
  fi
  status=""
  if [[ -z $line2 && $line3 =~ $status_re ]]; then
    status=${line3#Status: }
  else
    problem "$file: line 3 must be the status line 'Status: Accepted' (or Proposed, Rejected," \
      "Deprecated, Superseded by NNNN) after one blank line; found: '$line3'"
  fi
  count=$(grep -ciE "$any_status_re" "$file" || true)
  if ((count > 1)); then
    problem "$file: states its status $count times; keep only the status line (line 3)"
  fi
  row="| [$n]($base) | $title | $status |"
  if ! grep -sqF -- "| [$n]($base) |" "$index"; then
    problem "$file has no row in $index; add: $row"
  elif [[ -n $title && -n $status ]] && ! grep -sqxF -- "$row" "$index"; then
    problem "$file: its row in $index differs from the file; expected: $row"
  fi
done

# Every row of the index names a file that exists.
while IFS= read -r link; do
  [[ -e docs/adr/$link ]] || problem "$index has a row for docs/adr/$link, which does not exist"
done < <(grep -soE '^\| *\[[0-9]{4}\]\([^)]*\)' "$index" | sed -E 's/.*\(([^)]*)\)$/\1/' || true)

if ((failed)); then
  echo "check_docs: FAILED (see docs/record.md and docs/adr/README.md)" >&2
  exit 1
fi
echo "check_docs: every cited ADR has a row; every docs/adr file has its row and status line"
