# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the benchmark scripts: nginx as the same-run HTTP peer, one worker with sendfile.
# start_nginx_peer DIR ADDR PORT ROOT: writes DIR/nginx.conf, starts nginx in the foreground of a
# background job, and sets nginx_master to its pid.
start_nginx_peer() {
  local dir=$1 listen_addr=$2 port=$3 root=$4
  mkdir -p "$dir"
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 8192; }
http {
  sendfile on; tcp_nopush on; access_log off;
  keepalive_requests 1000000; keepalive_timeout 300;
  types { video/mp2t ts; }
  server { listen $listen_addr:$port; root $root; }
}
CONF
  nginx -c "$dir/nginx.conf" -p "$dir" &
  nginx_master=$!
  sleep 1
}
