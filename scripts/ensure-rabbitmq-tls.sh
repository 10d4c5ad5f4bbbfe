#!/usr/bin/env bash
# Gives the local RabbitMQ an AMQP-over-TLS listener on 5671, as Advanced Event Mesh offers (amqps):
#   a CA, a server certificate for localhost and a client certificate (CN fleet-order-notifier-client), made once
#   into $TLS_DIR; the durable settings in /etc/rabbitmq/rabbitmq.conf for every later start; on a running node
#   without the listener the same settings applied live (never a restart: other runs use the node); the RabbitMQ
#   user named by the client certificate's CN, for SASL EXTERNAL. Port 5672 stays as it is.
# Idempotent: when everything is in place it only checks and returns.
# Called by scripts/ensure-services.sh once RabbitMQ answers on 5672.
set -euo pipefail
TLS_DIR=/var/lib/fleet-order-notifier-tls
CLIENT_CN=fleet-order-notifier-client
CONF=/etc/rabbitmq/rabbitmq.conf
say() { echo "[ensure-rabbitmq-tls] $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v openssl >/dev/null 2>&1; then
  say "installing openssl (Debian package)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
fi

# ---------- certificates, made once ----------
if [ ! -s "$TLS_DIR/client.key" ]; then
  say "making a CA and server/client certificates in $TLS_DIR"
  as_root mkdir -p "$TLS_DIR"
  work=$(mktemp -d)
  (
    cd "$work"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=fleet-order-notifier test CA" \
      -keyout ca.key -out ca.pem -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    sign() { # name subject extensions
      openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
      printf '%s\n' "$3" > "$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    }
    sign server "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
    sign client "/CN=$CLIENT_CN" "extendedKeyUsage=clientAuth"
    rm -f ./*.csr ./*.ext ./*.srl
  )
  as_root cp "$work"/ca.pem "$work"/ca.key "$work"/server.pem "$work"/server.key "$work"/client.pem "$work"/client.key "$TLS_DIR/"
  rm -rf "$work"
  # RabbitMQ runs as its own user and must read the server key.
  as_root chmod 0644 "$TLS_DIR"/*.pem
  as_root chmod 0640 "$TLS_DIR"/*.key
  if id rabbitmq >/dev/null 2>&1; then as_root chgrp rabbitmq "$TLS_DIR"/server.key; fi
fi

# ---------- durable configuration, for every later start ----------
if ! grep -q '^listeners.ssl.default' "$CONF" 2>/dev/null; then
  say "writing the TLS listener into $CONF"
  as_root tee -a "$CONF" >/dev/null <<CONFEOF
# AMQP over TLS with client certificates (SASL EXTERNAL), as Advanced Event Mesh offers; see scripts/ensure-rabbitmq-tls.sh
listeners.ssl.default = 5671
ssl_options.cacertfile = $TLS_DIR/ca.pem
ssl_options.certfile = $TLS_DIR/server.pem
ssl_options.keyfile = $TLS_DIR/server.key
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = false
auth_mechanisms.1 = PLAIN
auth_mechanisms.2 = AMQPLAIN
auth_mechanisms.3 = EXTERNAL
ssl_cert_login_from = common_name
CONFEOF
fi
enabled=/etc/rabbitmq/enabled_plugins
if ! grep -q rabbitmq_auth_mechanism_ssl "$enabled" 2>/dev/null; then
  say "enabling rabbitmq_auth_mechanism_ssl"
  as_root rabbitmq-plugins enable rabbitmq_auth_mechanism_ssl >/dev/null
fi

# ---------- the running node, live ----------
listening() { ss -ltn 2>/dev/null | grep -q ':5671 '; }
if ! listening; then
  say "starting the TLS listener on 5671 live"
  as_root rabbitmqctl -q eval "
    ok = application:set_env(rabbit, ssl_options, [{cacertfile, \"$TLS_DIR/ca.pem\"}, {certfile, \"$TLS_DIR/server.pem\"},
      {keyfile, \"$TLS_DIR/server.key\"}, {verify, verify_peer}, {fail_if_no_peer_cert, false}]),
    ok = application:set_env(rabbit, auth_mechanisms, ['PLAIN', 'AMQPLAIN', 'EXTERNAL']),
    ok = application:set_env(rabbit, ssl_cert_login_from, common_name),
    ok = application:set_env(rabbit, ssl_listeners, [5671]),
    rabbit_networking:start_ssl_listener(5671, rabbit_networking:ensure_ssl(), 10)." >/dev/null
  for _ in $(seq 1 40); do listening && break; sleep 0.25; done
  listening || { echo "RabbitMQ did not listen on 5671; see /var/log/rabbitmq/" >&2; exit 1; }
fi

# ---------- the user the client certificate logs in as ----------
if ! as_root rabbitmqctl -q list_users 2>/dev/null | grep -q "^$CLIENT_CN\b"; then
  say "adding the RabbitMQ user $CLIENT_CN (SASL EXTERNAL, no password)"
  as_root rabbitmqctl -q add_user "$CLIENT_CN" "$(openssl rand -hex 16)" >/dev/null
  as_root rabbitmqctl -q clear_password "$CLIENT_CN" >/dev/null
  as_root rabbitmqctl -q set_permissions -p / "$CLIENT_CN" '.*' '.*' '.*' >/dev/null
fi
say "TLS listener on 5671; CA and certificates in $TLS_DIR"
