#!/usr/bin/env bash
# Starts a private nginx with the RTMP module on 127.0.0.1, as the current user, in its own prefix
# directory (no system files touched). Prints the PID. Usage: nginx-rtmp.sh PREFIX PORT
set -euo pipefail
prefix=$1
port=$2
mkdir -p "$prefix/logs" "$prefix/recordings" "$prefix/tmp"
cat > "$prefix/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
daemon off;
master_process off;
worker_processes 1;
error_log $prefix/logs/error.log warn;
pid $prefix/nginx.pid;
events { worker_connections 64; }
rtmp {
    access_log $prefix/logs/rtmp-access.log;
    server {
        listen 127.0.0.1:$port;
        chunk_size 4096;
        application live {
            live on;
            record all;
            record_path $prefix/recordings;
            record_unique on;
        }
    }
}
CONF
# setsid: its own session, so a Ctrl-C meant for studio does not stop nginx before studio has closed
# its stream; whoever started it ends it by PID.
setsid nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" >"$prefix/logs/nginx.out" 2>&1 </dev/null &
echo $!
