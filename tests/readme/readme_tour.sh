#!/usr/bin/env bash
# README.md's "A tour of the command line", run as written: every ```sh block of that section
# (up to the next "## " heading), command by command and in order, in a fresh temporary folder
# that holds a copy of examples/, with `loom` the binary under test and the default home
# ./.loom of that folder. Each command must exit 0, and print what the README shows.
#   tests/readme/readme_tour.sh <repository root> <path to loom>
#
# The convention README authors follow (and the README's tour says so in one sentence):
#   - A command is a line of a ```sh block that is neither blank nor a comment (a line ending in
#     `\` continues on the next). A trailing `# ...` after it is a plain shell comment.
#   - Shown output: comment lines starting "#   " (a hash and three spaces) right after a
#     command line, one or several, show lines the command prints on stdout. Each must match a
#     whole stdout line (trailing spaces ignored), the shown lines in their order. In a shown
#     line, `...` (with the spaces around it) stands for any text, also none; `<id>` for any
#     execution id; a generated id (26 lower-case base-32 characters, like
#     01m8mnvety52hh94t08706kvz6) for any generated id; everything else is literal. A shown
#     line "(exit N)" says the command exits N instead of 0. Any other comment line
#     ("# text", "#  text") is prose and is not checked.
#   - `<id>` in a command stands for the execution id most recently printed by a command before
#     it (an "id:" line, or a line starting {"id":"..."). Prefer an explicit --id.
#   - `alias loom=...` is replaced by the binary under test (a shell function `loom`).
#   - Skipped, by the rules in skip_reason below: the block that sets LOOM_DATABASE_URL (it
#     needs a PostgreSQL server; `loom worker` there runs until stopped), `loom serve` (it serves
#     until stopped), `loom worker` without --once (it runs until SIGTERM), and `loom bench
#     long-run` (1000-turn runs with a process per tool call: one to two minutes on 2 cores,
#     and it prints measurements only; LOOM_README_TOUR_FULL=1 runs it too).
# Commands run in this shell (eval), so `export X=$(loom ...)` holds for the commands after it.
# Prints "readme tour: N commands run, M shown lines checked"; exits 1 naming each README line
# whose command failed or printed something else than the README shows.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <repository root> <path to loom>" >&2
  exit 2
fi
root=$(cd "$1" && pwd)
loom_bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
readme=$root/README.md
section='## A tour of the command line'
[[ -f $readme ]] || { echo "readme tour: $readme is missing" >&2; exit 2; }
[[ -x $loom_bin ]] || { echo "readme tour: $2 is not an executable loom binary" >&2; exit 2; }
full=${LOOM_README_TOUR_FULL:-0}

# ---- parse the section's ```sh blocks ------------------------------------------------------
cmd_text=() cmd_line=() cmd_block=()      # per command: its text, README line, block number
shown_text=() shown_line=() shown_cmd=()  # per shown line: its text, README line, command index
in_section=0 in_block=0 block=0 lineno=0 prev=none found=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  if ((!in_section)); then
    [[ $line == "$section" ]] && in_section=1 found=1
    continue
  fi
  if ((!in_block)); then
    [[ $line == '## '* ]] && break
    if [[ $line == '```sh' ]]; then
      in_block=1 block=$((block + 1)) prev=none
    fi
    continue
  fi
  if [[ $line == '```' ]]; then
    in_block=0
    continue
  fi
  if [[ $prev == continued ]]; then  # the previous command line ended in a backslash
    last=$((${#cmd_text[@]} - 1))
    cmd_text[last]+=$'\n'"$line"  # eval reads the backslash-newline as bash does
    [[ $line == *\\ ]] || prev='command'
    continue
  fi
  if [[ $line == '#   '* && ($prev == command || $prev == shown) ]]; then
    shown_text+=("${line#'#   '}")
    shown_line+=("$lineno")
    shown_cmd+=($((${#cmd_text[@]} - 1)))
    prev=shown
  elif [[ $line =~ ^[[:space:]]*# ]]; then
    prev=comment
  elif [[ $line =~ ^[[:space:]]*$ ]]; then
    prev=blank
  else
    cmd_text+=("$line")
    cmd_line+=("$lineno")
    cmd_block+=("$block")
    if [[ $line == *\\ ]]; then prev='continued'; else prev='command'; fi
  fi
done <"$readme"
((found)) || { echo "readme tour: README.md has no line '$section'" >&2; exit 1; }
((${#cmd_text[@]} > 0)) || { echo "readme tour: no commands in the tour's sh blocks" >&2; exit 1; }

# The blocks that set LOOM_DATABASE_URL (every command after it would go to a server).
postgres_blocks=" "
for i in "${!cmd_text[@]}"; do
  if [[ ${cmd_text[i]} =~ (^|[[:space:]])export[[:space:]]+LOOM_DATABASE_URL= ]]; then
    postgres_blocks+="${cmd_block[i]} "
  fi
done

# Why command i is not run, or nothing when it runs.
serve_re='(^|[;&|(][[:space:]]*)loom[[:space:]]+serve([[:space:]]|$)'
worker_re='(^|[;&|(][[:space:]]*)loom[[:space:]]+worker([[:space:]]|$)'
bench_long_re='(^|[;&|(][[:space:]]*)loom[[:space:]]+bench[[:space:]]+long-run([[:space:]]|$)'
skip_reason() {
  local c=${cmd_text[$1]}
  if [[ $postgres_blocks == *" ${cmd_block[$1]} "* ]]; then
    echo "its block sets LOOM_DATABASE_URL: it needs a PostgreSQL server"
  elif [[ $c =~ $serve_re ]]; then
    echo "loom serve serves until it is stopped"
  elif [[ $c =~ $worker_re && $c != *--once* ]]; then
    echo "loom worker without --once runs until SIGTERM"
  elif [[ $full != 1 && $c =~ $bench_long_re ]]; then
    echo "a benchmark of 1000-turn runs, 1-2 min on 2 cores; LOOM_README_TOUR_FULL=1 runs it"
  fi
}

# A shown line as an anchored extended regular expression (see the convention above).
shown_regex() {
  local s=$1 out='^' prev_char='' c
  s="${s%"${s##*[![:space:]]}"}"
  s=$(sed -E 's/ *\.\.\. */.../g' <<<"$s")  # `...` takes the spaces around it
  while [[ -n $s ]]; do
    if [[ $s == '...'* ]]; then
      out+='.*' s=${s:3} prev_char=.
      continue
    fi
    if [[ $s == '<id>'* ]]; then
      out+='[^[:space:]"]+' s=${s:4} prev_char='>'
      continue
    fi
    if [[ ! $prev_char =~ [0-9a-z] && $s =~ ^[0-7][0-9abcdefghjkmnpqrstvwxyz]{25}([^0-9a-z]|$) ]]; then
      out+='[0-9a-z]{26}' s=${s:26} prev_char=z
      continue
    fi
    c=${s:0:1} s=${s:1} prev_char=$c
    case $c in
      \\) out+="\\\\" ;;
      '^') out+='\^' ;;
      [.*+?\(\)\{\}\|\$\[]) out+="[$c]" ;;
      *) out+=$c ;;
    esac
  done
  printf '%s$' "$out"
}

# ---- run them --------------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -R "$root/examples" "$work/examples"
cd "$work"
# Nothing of the caller's Loom environment leaks in: the home is ./.loom, the stores embedded.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^LOOM_' || true)
loom() { "$loom_bin" "$@"; }

failures=0 ran=0 checked=0 last_id=''
fail() {
  failures=$((failures + 1))
  printf 'readme tour: FAILED %s\n' "$1" >&2
  printf '  command:  %s\n' "$2" >&2
  shift 2
  local part
  for part in "$@"; do printf '%s\n' "$part" >&2; done
}
indent() { sed 's/^/    | /' "$1"; }

started=$SECONDS
for i in "${!cmd_text[@]}"; do
  cmd=${cmd_text[i]}
  where="README.md:${cmd_line[i]}"
  if [[ $cmd =~ ^[[:space:]]*alias[[:space:]]+loom= ]]; then
    continue  # `loom` is already the function above
  fi
  reason=$(skip_reason "$i")
  if [[ -n $reason ]]; then
    echo "readme tour: skipped $where: $cmd  ($reason)"
    continue
  fi
  if [[ $cmd == *'<id>'* ]]; then
    if [[ -z $last_id ]]; then
      fail "$where: <id> but no command before it printed an id" "$cmd"
      continue
    fi
    cmd=${cmd//<id>/$last_id}
  fi

  # The shown lines of this command, and the exit status they expect.
  want_rc=0 patterns=() pattern_lines=() pattern_texts=()
  for j in "${!shown_text[@]}"; do
    ((shown_cmd[j] == i)) || continue
    if [[ ${shown_text[j]} =~ ^\(exit\ ([0-9]+)\)[[:space:]]*$ ]]; then
      want_rc=${BASH_REMATCH[1]}
      continue
    fi
    patterns+=("$(shown_regex "${shown_text[j]}")")
    pattern_lines+=("${shown_line[j]}")
    pattern_texts+=("${shown_text[j]}")
  done

  echo "readme tour: $where: $cmd"
  out=$work/.stdout err=$work/.stderr
  t0=$SECONDS
  set +eu
  eval "$cmd" >"$out" 2>"$err" </dev/null
  rc=$?
  set -eu
  ran=$((ran + 1))
  ((SECONDS - t0 < 5)) || echo "readme tour:   took $((SECONDS - t0)) s"

  if ((rc != want_rc)); then
    fail "$where: exit status $rc, the README expects $want_rc" "$cmd" "  stdout:" \
      "$(indent "$out")" "  stderr:" "$(indent "$err")"
  fi
  mapfile -t lines <"$out"
  for k in "${!lines[@]}"; do
    lines[k]="${lines[k]%"${lines[k]##*[![:space:]]}"}"
    if [[ ${lines[k]} =~ ^id:[[:space:]]+([^[:space:]]+)$ ]] ||
       [[ ${lines[k]} =~ ^\{\"id\":\"([^\"]+)\" ]]; then
      last_id=${BASH_REMATCH[1]}
    fi
  done
  next=0  # the shown lines match stdout lines in their order
  for p in "${!patterns[@]}"; do
    checked=$((checked + 1))
    matched=-1
    for ((k = next; k < ${#lines[@]}; k++)); do
      if [[ ${lines[k]} =~ ${patterns[p]} ]]; then
        matched=$k
        break
      fi
    done
    if ((matched < 0)); then
      after=''
      ((next == 0)) || after=" after stdout line $next"
      fail "README.md:${pattern_lines[p]}: no stdout line$after matches the shown line" \
        "$cmd" "  expected: ${pattern_texts[p]}" "  stdout (exit $rc):" "$(indent "$out")" \
        "  stderr:" "$(indent "$err")"
    else
      next=$((matched + 1))
    fi
  done
done

echo "readme tour: took $((SECONDS - started)) s"
((failures == 0)) ||
  echo "readme tour: $failures failure(s): the README's tour and what loom prints disagree" >&2
echo "readme tour: $ran commands run, $checked shown lines checked"
((failures == 0)) || exit 1
