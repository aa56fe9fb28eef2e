#!/usr/bin/env bash
# The demo studio: installs what is missing of what the demo needs (scripts/packages/demo.txt: no test
# stack), builds, starts a private nginx-rtmp on loopback and runs
# `studio serve --demo` pushing to it. Ctrl-C stops the server cleanly, then the nginx this started.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
scripts/setup.sh demo
echo "demo: building studio (release; the first build takes a few minutes)"
# studio and its engine library (libStudioEngine.so, beside it: `serve` runs in it).
swift build -c release --product studio
swift build -c release --product StudioEngine
bin=$(swift build -c release --show-bin-path)/studio

port=${STUDIO_DEMO_PORT:-1935}
# A port in use (another nginx): the next free one.
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
prefix=$(mktemp -d /tmp/studio-demo-nginx.XXXXXX)
nginx_pid=$(scripts/nginx-rtmp.sh "$prefix" "$port")
trap 'kill "$nginx_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

url="rtmp://127.0.0.1:$port/live/demo"
echo "demo: nginx-rtmp on 127.0.0.1:$port (pid $nginx_pid), recordings in $prefix/recordings"
echo "demo: watch and operate it in a browser:  http://127.0.0.1:8080/  (the console)"
command -v ffplay >/dev/null && echo "demo: or watch with:  ffplay -fflags nobuffer $url"
echo "demo: operate from another terminal:  $bin cameras | switch cam2 | scene pip | preview trio | auto | status | log"
echo "demo: or over HTTP:  curl -s http://127.0.0.1:8080/api/v1/status  (docs/http-api.md; --no-http turns it off)"
# The stream key comes from the environment (`${NAME}` in the URL), as docs/security.md recommends, so
# it never sits on the command line where other local users could read it.
export STUDIO_DEMO_KEY=demo
"$bin" serve --demo --config deploy/demo.yaml --rtmp "rtmp://127.0.0.1:$port/live/\${STUDIO_DEMO_KEY}" "$@"
