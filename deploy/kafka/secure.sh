# The secured cluster of deploy/kafka.sh (`--secure`): certificates, broker config, client configs
# and secure.env. Sourced by deploy/kafka.sh, which sets $cluster, $base (SASL_SSL port) and
# $ctl_base (controller port); the mTLS listener is $base + 1.

scram_user=connect scram_password=connect-secret
plain_user=plain-user plain_password=plain-secret
# The broker asks SASL clients to re-authenticate (KIP-368) this often; 0 turns it off.
reauth_ms=${KAFKA_SECURE_REAUTH_MS:-60000}
certs() { echo "$cluster/certs"; }
ssl_port() { echo $((base + 1)); }

# A self-signed CA: $1 file stem, $2 common name.
make_ca() {
  local d; d=$(certs)
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$d/$1.key" -out "$d/$1.pem" -days 3650 \
    -subj "/CN=$2" -extensions v3 \
    -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3]\n%s\n%s\n%s\n' \
      'basicConstraints=critical,CA:TRUE' 'keyUsage=critical,keyCertSign,cRLSign' 'subjectKeyIdentifier=hash') \
    2>/dev/null
}

# A certificate signed by ca.pem: $1 file stem, $2 common name, $3 extendedKeyUsage, $4 subjectAltName.
# The key is PKCS#8 PEM without a password (what `openssl genpkey` writes).
make_leaf() {
  local d; d=$(certs)
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/$1.key" 2>/dev/null
  openssl req -new -key "$d/$1.key" -subj "/CN=$2" -out "$d/$1.csr" -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n')
  openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 825 -sha256 \
    -out "$d/$1.pem" -extfile <(printf '%s\n' 'basicConstraints=critical,CA:FALSE' \
      'keyUsage=critical,digitalSignature,keyEncipherment' "extendedKeyUsage=$3" "subjectAltName=$4" \
      'subjectKeyIdentifier=hash' 'authorityKeyIdentifier=keyid') 2>/dev/null
  rm -f "$d/$1.csr"
}

# Generated once per cluster (`reset --secure` deletes them with the data).
make_certs() {
  local d; d=$(certs)
  [ -f "$d/.complete" ] && return 0
  command -v openssl >/dev/null || { echo "kafka.sh: openssl is required for --secure" >&2; exit 1; }
  command -v keytool >/dev/null || { echo "kafka.sh: keytool (from the JDK) is required for --secure" >&2; exit 1; }
  rm -rf "$d"; mkdir -p "$d"; chmod 700 "$d"
  openssl rand -hex 12 > "$d/password"
  local pw; pw=$(cat "$d/password")
  make_ca ca "connect-test-ca"
  make_ca other-ca "untrusted-test-ca"; rm -f "$d/other-ca.key"
  make_leaf broker localhost serverAuth,clientAuth "IP:127.0.0.1,DNS:localhost"
  make_leaf client connect-client clientAuth "DNS:connect-client"
  openssl pkcs12 -export -name broker -inkey "$d/broker.key" -in "$d/broker.pem" -certfile "$d/ca.pem" \
    -out "$d/broker.p12" -passout "pass:$pw"
  openssl pkcs12 -export -name client -inkey "$d/client.key" -in "$d/client.pem" -certfile "$d/ca.pem" \
    -out "$d/client.p12" -passout "pass:$pw"
  # A truststore is a PKCS#12 file of trusted certificates; Java only trusts entries with its own
  # trust attribute, which keytool writes (Debian's OpenSSL 3.0 has no -jdktrust).
  keytool -importcert -noprompt -alias ca -file "$d/ca.pem" -keystore "$d/truststore.p12" \
    -storetype PKCS12 -storepass "$pw" >/dev/null 2>&1
  touch "$d/.complete"
}

write_secure_config() {
  local d pw; d=$(certs); pw=$(cat "$d/password")
  mkdir -p "$cluster/node-1/logs"
  cat > "$cluster/node-1/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctl_base
listeners=SASL_SSL://127.0.0.1:$base,SSL://127.0.0.1:$(ssl_port),CONTROLLER://127.0.0.1:$ctl_base
advertised.listeners=SASL_SSL://127.0.0.1:$base,SSL://127.0.0.1:$(ssl_port)
listener.security.protocol.map=SASL_SSL:SASL_SSL,SSL:SSL,CONTROLLER:SSL
inter.broker.listener.name=SSL
controller.listener.names=CONTROLLER
ssl.keystore.type=PKCS12
ssl.keystore.location=$d/broker.p12
ssl.keystore.password=$pw
ssl.key.password=$pw
ssl.truststore.type=PKCS12
ssl.truststore.location=$d/truststore.p12
ssl.truststore.password=$pw
listener.name.ssl.ssl.client.auth=required
listener.name.controller.ssl.client.auth=required
listener.name.sasl_ssl.ssl.client.auth=none
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$plain_user="$plain_password";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# No server callback handler: Kafka's unsecured-token validator (unsigned JWTs with a sub claim).
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
listener.name.sasl_ssl.connections.max.reauth.ms=$reauth_ms
log.dirs=$cluster/node-1/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.retention.hours=24
log.segment.bytes=67108864
PROPS
  # Java client configs, one per way in (Kafka's tools: --command-config <file>).
  local trust="ssl.truststore.type=PEM
ssl.truststore.location=$d/ca.pem"
  local m
  for m in SCRAM-SHA-256 SCRAM-SHA-512; do
    printf '%s\n' "security.protocol=SASL_SSL" "sasl.mechanism=$m" "$trust" \
      "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"$scram_user\" password=\"$scram_password\";" \
      > "$cluster/client-$(echo "$m" | tr 'A-Z' 'a-z').properties"
  done
  printf '%s\n' "security.protocol=SASL_SSL" "sasl.mechanism=PLAIN" "$trust" \
    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"$plain_user\" password=\"$plain_password\";" \
    > "$cluster/client-plain.properties"
  printf '%s\n' "security.protocol=SASL_SSL" "sasl.mechanism=OAUTHBEARER" "$trust" \
    "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"connect\";" \
    > "$cluster/client-oauthbearer.properties"
  printf '%s\n' "security.protocol=SSL" "$trust" "ssl.keystore.type=PKCS12" \
    "ssl.keystore.location=$d/client.p12" "ssl.keystore.password=$pw" > "$cluster/client-ssl.properties"
}

# StorageTool format arguments that create the SCRAM user (both hash functions).
scram_format_args() {
  local m
  for m in SCRAM-SHA-256 SCRAM-SHA-512; do
    printf '%s\n' --add-scram "$m=[name=$scram_user,password=$scram_password]"
  done
}

write_secure_env() {
  local d pw; d=$(certs); pw=$(cat "$d/password")
  cat > "$cluster/secure.env" <<ENV
KAFKA_SECURE_SASL_SSL=127.0.0.1:$base
KAFKA_SECURE_SSL=127.0.0.1:$(ssl_port)
KAFKA_SECURE_CA=$d/ca.pem
KAFKA_SECURE_OTHER_CA=$d/other-ca.pem
KAFKA_SECURE_CLIENT_CERT=$d/client.pem
KAFKA_SECURE_CLIENT_KEY=$d/client.key
KAFKA_SECURE_CLIENT_P12=$d/client.p12
KAFKA_SECURE_CLIENT_P12_PASSWORD=$pw
KAFKA_SECURE_TRUSTSTORE_P12=$d/truststore.p12
KAFKA_SECURE_TRUSTSTORE_P12_PASSWORD=$pw
KAFKA_SECURE_SCRAM_USER=$scram_user
KAFKA_SECURE_SCRAM_PASSWORD=$scram_password
KAFKA_SECURE_PLAIN_USER=$plain_user
KAFKA_SECURE_PLAIN_PASSWORD=$plain_password
KAFKA_SECURE_REAUTH_MS=$reauth_ms
ENV
}
