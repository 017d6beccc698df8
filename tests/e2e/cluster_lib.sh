# A Redis Cluster for a suite, created with redis-cli --cluster create as operators do. Sourced
# after lib.sh: start_cluster NODES REPLICAS starts NODES nodes (NODE1_PORT...), creates the
# cluster with REPLICAS replicas per master, and waits until every node sees it ok: the masters
# serving every slot and each replica linked to its master. node_port N, node_url N and
# ncli PORT ARGS... then reach node N.

node_port() { local var="NODE${1}_PORT"; echo "${!var}"; }
node_url() { echo "redis://127.0.0.1:$(node_port "$1")"; }
ncli() { local port=$1; shift; redis-cli -p "$port" "$@"; }

# Every node sees the cluster as ok, with MASTERS masters and REPLICAS_EACH replicas per master,
# the replicas linked to their masters.
cluster_ok() {
    local masters=$1 replicas=$2 node port
    for node in "${NODES[@]}"; do
        port=$(node_port "$node")
        ncli "$port" cluster info | tr -d '\r' | grep -q '^cluster_state:ok' || return 1
        [ "$(ncli "$port" cluster nodes | awk '$3 !~ /fail/ && $3 ~ /slave/' | wc -l)" = \
            "$replicas" ] || return 1
        [ "$(ncli "$port" cluster nodes | awk '$3 !~ /fail/ && $3 ~ /master/' | wc -l)" = \
            "$masters" ] || return 1
        if ncli "$port" role | head -1 | grep -q slave; then
            ncli "$port" info replication | tr -d '\r' | grep -q '^master_link_status:up' || return 1
        fi
    done
}

start_cluster() {
    local count=$1 replicas_each=$2 node
    NODES=($(seq 1 "$count"))
    for node in "${NODES[@]}"; do
        start_redis "NODE$node" --cluster-enabled yes --cluster-config-file "nodes-$node.conf" \
            --cluster-node-timeout 2000 --repl-diskless-sync-delay 0
    done
    local addresses=()
    for node in "${NODES[@]}"; do
        addresses+=("127.0.0.1:$(node_port "$node")")
    done
    if ! redis-cli --cluster create "${addresses[@]}" --cluster-replicas "$replicas_each" \
        --cluster-yes >"$WORK/cluster-create.log" 2>&1; then
        echo "FATAL: redis-cli --cluster create failed:" >&2
        tail -5 "$WORK/cluster-create.log" >&2
        exit 1
    fi
    local masters=$((count / (replicas_each + 1)))
    local replicas=$((count - masters))
    for _ in $(seq 1 300); do
        cluster_ok "$masters" "$replicas" && return 0
        sleep 0.1
    done
    echo "FATAL: the cluster did not come up" >&2
    exit 1
}
