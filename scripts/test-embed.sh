#!/usr/bin/env bash
# The README's "Embedding" commands, tried as an embedder would: installs the release build
# into a fresh prefix, checks that each installed header compiles alone, builds examples/embed against it with CMake (find_package, libloom.a)
# and with pkg-config (libloom.so), and runs both; then configures a project that adds Loom with
# add_subdirectory (loom::loom is there, Loom's tests are not). Part of scripts/test.sh;
# assumes the release preset is built.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="$PWD/build/embed-prefix"
rm -rf "$prefix" build/embed build/embed-pc build/embed-sub build/embed-headers
cmake --install build/release --prefix "$prefix" >/dev/null
[[ -x "$prefix/libexec/loom/loom-guard" ]] || {
  echo "test-embed: the install holds no libexec/loom/loom-guard (the tool processes' guard)" >&2
  exit 1
}

# Every installed header compiles on its own, with only the prefix on the include path: the
# public surface never reaches a private header (those stay in src/).
mkdir -p build/embed-headers
count=0
while IFS= read -r header; do
  echo "#include \"${header#"$prefix/include/"}\"" >build/embed-headers/one.cc
  g++ -std=c++20 -fsyntax-only -I"$prefix/include" build/embed-headers/one.cc || {
    echo "test-embed: the installed ${header#"$prefix/include/"} does not compile alone" >&2
    exit 1
  }
  count=$((count + 1))
done < <(find "$prefix/include/loom" -name '*.h' | sort)
echo "embed: $count installed headers each compile alone"

cmake -S examples/embed -B build/embed -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/embed
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
echo "embed (CMake, libloom.a):"
./build/embed/embed "$home/static"

# The program as a `loom` command line over its own agent: its Config in code applies (the
# tool's result offloaded, the secret redacted), and the approval in a second process finishes
# the run without running the tool again.
echo "embed (its own loom command line, Config in code):"
cli=(./build/embed/embed loom --home "$home/cli")
"${cli[@]}" run helper --id h1 --input '"How is churn?"' --json | tee "$home/run.json"
grep -q '"parkReason":"approval"' "$home/run.json"
# Output is captured before grep reads it: `producer | grep -q` under pipefail fails when grep
# stops reading at its first match and the producer then dies of SIGPIPE.
log="$("${cli[@]}" log h1)"
grep -q __loomClaimCheck <<<"$log" || {
  echo "test-embed: the Config in code did not offload the tool's result" >&2
  exit 1
}
if grep -rqa sk-embed-secret-1 "$home/cli"; then
  echo "test-embed: the secret reached the home" >&2
  exit 1
fi
"${cli[@]}" signal h1 'approve:helper#turn:2:tool:0' '{"approved": true}' --json | tee "$home/done.json"
grep -q '"status":"completed"' "$home/done.json"
grep -q '"effectsRun":2' "$home/done.json" || {
  echo "test-embed: the approved run did not run exactly publish and the last turn" >&2
  exit 1
}

# The program's own worker: runs submitted to it are run on threads of that program, with its
# own C++ task (hello.greet exists only there), one line per run.
"${cli[@]}" run hello --submit --id w1 --input '{"name": "ada"}' >/dev/null
"${cli[@]}" run hello --submit --id w2 --input '{"name": "grace"}' >/dev/null
worked="$("${cli[@]}" worker --once)"
echo "$worked"
for id in w1 w2; do
  grep -q "worker: $id: completed" <<<"$worked" || {
    echo "test-embed: the program's own worker did not complete $id" >&2
    exit 1
  }
done
grep -q "in this process" <<<"$worked" || {
  echo "test-embed: the program's worker did not run its runs in its own process" >&2
  exit 1
}

# The README's pkg-config lines exactly as written, with HOME a fresh folder the release build
# is installed into as the README says: the program must start with no LD_LIBRARY_PATH.
readme_home="$PWD/build/embed-pc/home"
rm -rf build/embed-pc && mkdir -p "$readme_home"
pc_lines="$(awk '/^```sh$/ {block=""; inside=1; next} /^```$/ {if (block ~ /pkg-config --cflags --libs loom/) print block; inside=0; next} inside {block = block $0 "\n"}' README.md)"
[[ -n "$pc_lines" ]] || { echo "test-embed: no pkg-config block found in README.md" >&2; exit 1; }
cp examples/embed/embed.cc build/embed-pc/my_program.cc
echo "embed (pkg-config, libloom.so, the README's lines):"
(
  cd build/embed-pc
  export HOME="$readme_home"
  unset LD_LIBRARY_PATH PKG_CONFIG_PATH
  cmake --install "$OLDPWD/build/release" --prefix "$HOME/.local" >/dev/null
  eval "$pc_lines"
  ./my_program "$home/shared"
)
linked="$(ldd build/embed-pc/my_program)"
grep -q "libloom.so" <<<"$linked" || {
  echo "test-embed: the pkg-config build did not link libloom.so" >&2
  exit 1
}

cmake -S examples/embed/subproject -B build/embed-sub -G Ninja -DLOOM_SOURCE="$PWD" >/dev/null
echo "embed (add_subdirectory): loom::loom defined, Loom's tests and benchmarks off"
