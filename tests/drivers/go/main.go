// What gocql sees of a Helenus cluster, printed as one JSON object per line (read by
// tests/integration/test_drivers_java_go.py).
//
//	go run . [--watch KS] DC PREFIX HOST...
//
// DC is the local datacenter, PREFIX names the keyspaces this run creates (PREFIX_rf2:
// SimpleStrategy 2, PREFIX_rf3: NetworkTopologyStrategy DC: 3). After the first line the program
// waits for a line on stdin naming a node the test has killed, then writes at ALL until the server
// answers Unavailable and prints a second line with what the driver saw; then, after another line
// (the node restarted), a third with how long the driver took to see it up again. With --watch KS
// it only watches a node join (see watch).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

var keys = []string{"a", "b", "c", "key-1", "key-2", "key-3", "key-42", "helenus", "zebra", "0"}

const (
	partitions       = 50
	rowsPerPartition = 10
	pageSize         = 37
)

// recordingPolicy is TokenAwareHostPolicy(RoundRobinHostPolicy()) that also remembers the hosts
// the session told it about and their up/down transitions (from the control connection's
// STATUS_CHANGE/TOPOLOGY_CHANGE events and from the pools).
type recordingPolicy struct {
	gocql.HostSelectionPolicy
	mu        sync.Mutex
	hosts     map[string]*gocql.HostInfo
	keyspaces map[string]bool
	events    []string
}

func (p *recordingPolicy) record(event string, h *gocql.HostInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosts[h.ConnectAddress().String()] = h
	p.events = append(p.events, event+" "+h.ConnectAddress().String())
}

// KeyspaceChanged: the session calls it for a SCHEMA_CHANGE event of a keyspace (debounced by
// a second, after schema agreement); only then does the token-aware policy know that keyspace's
// replicas (gocql computes them for the session keyspace and for keyspaces it heard change).
func (p *recordingPolicy) KeyspaceChanged(update gocql.KeyspaceUpdateEvent) {
	p.HostSelectionPolicy.KeyspaceChanged(update)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keyspaces[update.Keyspace] = true
	p.events = append(p.events, "keyspace "+update.Change+" "+update.Keyspace)
}

func (p *recordingPolicy) knows(keyspaces ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ks := range keyspaces {
		if !p.keyspaces[ks] {
			return false
		}
	}
	return true
}

// snapshot: the hosts the policy was told of (address, datacenter, rack, host id, state,
// tokens) and the events so far.
func (p *recordingPolicy) snapshot() ([]interface{}, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var hosts []interface{}
	for _, h := range p.hosts {
		hosts = append(hosts, map[string]interface{}{
			"address":    h.ConnectAddress().String(),
			"datacenter": h.DataCenter(),
			"rack":       h.Rack(),
			"host_id":    h.HostID(),
			"state":      map[bool]string{true: "UP", false: "DOWN"}[h.IsUp()],
			"version":    h.Version().String(),
			"tokens":     h.Tokens(),
		})
	}
	return hosts, append([]string(nil), p.events...)
}

func (p *recordingPolicy) AddHost(h *gocql.HostInfo) {
	p.record("add", h)
	p.HostSelectionPolicy.AddHost(h)
}

func (p *recordingPolicy) RemoveHost(h *gocql.HostInfo) {
	p.record("remove", h)
	p.HostSelectionPolicy.RemoveHost(h)
}

func (p *recordingPolicy) HostUp(h *gocql.HostInfo) {
	p.record("up", h)
	p.HostSelectionPolicy.HostUp(h)
}

func (p *recordingPolicy) HostDown(h *gocql.HostInfo) {
	p.record("down", h)
	p.HostSelectionPolicy.HostDown(h)
}

// observer remembers which host served each query.
type observer struct {
	mu   sync.Mutex
	last map[string]string // statement + first value -> host
}

func (o *observer) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	if q.Host == nil || len(q.Values) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last[fmt.Sprint(q.Statement, "|", q.Values[0])] = q.Host.ConnectAddress().String()
}

func (o *observer) host(statement string, key interface{}) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last[fmt.Sprint(statement, "|", key)]
}

func ms(since time.Time) int64 { return time.Since(since).Milliseconds() }

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// replicas: the hosts the token-aware policy would try first for `key` of `ks`, that is the
// replicas of its token (all up) before the round-robin fallback.
func replicas(policy gocql.HostSelectionPolicy, session *gocql.Session, ks string, key string, rf int) []string {
	q := session.Query("SELECT v FROM "+ks+".kv WHERE k = ?", key)
	defer q.Release()
	return firstHosts(policy, q, rf)
}

// firstHosts: the first n hosts the policy picks for q (sorted addresses).
func firstHosts(policy gocql.HostSelectionPolicy, q *gocql.Query, n int) []string {
	next := policy.Pick(q)
	var hosts []string
	for i := 0; i < n; i++ {
		h := next()
		if h == nil {
			break
		}
		hosts = append(hosts, h.Info().ConnectAddress().String())
	}
	sort.Strings(hosts)
	return hosts
}

func main() {
	args, watchKeyspace := os.Args[1:], ""
	if len(args) > 1 && args[0] == "--watch" {
		watchKeyspace, args = args[1], args[2:]
	}
	if len(args) < 3 {
		fail("usage: %s [--watch KS] DC PREFIX HOST...", os.Args[0])
	}
	dc, prefix, contacts := args[0], args[1], args[2:]
	rf2, rf3 := prefix+"_rf2", prefix+"_rf3"
	out := map[string]interface{}{"driver": "gocql v1.7.0"}

	gocql.Logger = log.New(os.Stderr, "gocql ", log.Ltime|log.Lmicroseconds)
	started := time.Now()
	policy := &recordingPolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()),
		hosts:               map[string]*gocql.HostInfo{},
		keyspaces:           map[string]bool{},
	}
	obs := &observer{last: map[string]string{}}
	cluster := gocql.NewCluster(contacts...)
	cluster.Port = 9042
	cluster.ProtoVersion = 4
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.MaxWaitSchemaAgreement = 20 * time.Second
	cluster.ReconnectInterval = 60 * time.Second
	cluster.PoolConfig.HostSelectionPolicy = policy
	if watchKeyspace != "" {
		// gocql's token-aware policy knows the replicas of the session keyspace from the start
		cluster.Keyspace = watchKeyspace
	}
	cluster.QueryObserver = obs
	session, err := cluster.CreateSession()
	if err != nil {
		fail("connect: %v", err)
	}
	defer session.Close()
	if watchKeyspace != "" {
		watch(session, policy, watchKeyspace)
		return
	}
	out["protocol_version"] = cluster.ProtoVersion
	out["connect_ms"] = ms(started)

	// Schema: gocql itself waits for agreement after a schema change; then AwaitSchemaAgreement.
	var agreement []interface{}
	for _, ddl := range []string{
		"CREATE KEYSPACE " + rf2 + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE KEYSPACE " + rf3 + " WITH replication = {'class': 'NetworkTopologyStrategy', '" + dc + "': 3}",
		"CREATE TABLE " + rf2 + ".kv (k text PRIMARY KEY, v int)",
		"CREATE TABLE " + rf3 + ".kv (k text PRIMARY KEY, v int)",
		"CREATE TABLE " + rf3 + ".rows (p int, c int, v text, PRIMARY KEY (p, c))",
		"CREATE TABLE " + rf2 + ".composite (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))",
	} {
		t := time.Now()
		if err := session.Query(ddl).Exec(); err != nil {
			fail("%s: %v", ddl, err)
		}
		executed := ms(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := session.AwaitSchemaAgreement(ctx)
		cancel()
		a := map[string]interface{}{"statement": ddl, "execute_ms": executed, "ms": ms(t), "agreed": err == nil}
		if err != nil {
			a["error"] = err.Error()
		}
		agreement = append(agreement, a)
	}
	out["schema_agreement"] = agreement
	// The keyspaces' SCHEMA_CHANGE events reach the policy.
	t := time.Now()
	for !policy.knows(rf2, rf3) && ms(t) < 15000 {
		time.Sleep(50 * time.Millisecond)
	}
	out["keyspace_events"] = policy.knows(rf2, rf3)
	out["keyspace_events_ms"] = ms(t)

	// Hosts and tokens as the session's metadata gave them to the policy.
	out["hosts"], out["events"] = policy.snapshot()

	// The token map: a keyspace's metadata reaches the policy through KeyspaceChanged, the
	// partitioner through SetPartitioner; Pick then starts with the key's replicas.
	replicaMap := map[string]interface{}{}
	for _, ks := range []struct {
		name string
		rf   int
	}{{rf2, 2}, {rf3, 3}} {
		perKey := map[string]interface{}{}
		for _, key := range keys {
			perKey[key] = replicas(policy, session, ks.name, key, ks.rf)
		}
		replicaMap[ks.name] = perKey
	}
	out["replicas"] = replicaMap

	// The schema metadata gocql parsed from system_schema.
	tables := map[string]interface{}{}
	for _, t := range [][2]string{{rf2, "kv"}, {rf3, "kv"}, {rf3, "rows"}} {
		ks, err := session.KeyspaceMetadata(t[0])
		if err != nil || ks.Tables[t[1]] == nil {
			tables[t[0]+"."+t[1]] = nil
			continue
		}
		table := ks.Tables[t[1]]
		pk, ck := []string{}, []string{}
		for _, c := range table.PartitionKey {
			pk = append(pk, c.Name)
		}
		for _, c := range table.ClusteringColumns {
			ck = append(ck, c.Name)
		}
		columns := map[string]string{}
		for name, c := range table.Columns {
			columns[name] = c.Type.Type().String()
		}
		tables[t[0]+"."+t[1]] = map[string]interface{}{"partition_key": pk, "clustering": ck, "columns": columns}
	}
	out["tables"] = tables

	// Prepared INSERT/SELECT at QUORUM, routed by the policy (gocql prepares both and reads the
	// partition key indexes from the prepared metadata to compute the routing key).
	prepared := map[string]interface{}{}
	for _, ks := range []struct {
		name string
		rf   int
	}{{rf2, 2}, {rf3, 3}} {
		insert := "INSERT INTO " + ks.name + ".kv (k, v) VALUES (?, ?)"
		sel := "SELECT k, v FROM " + ks.name + ".kv WHERE k = ?"
		roundTrips, onReplica := 0, 0
		mismatches := []string{}
		for i, key := range keys {
			if err := session.Query(insert, key, i).Consistency(gocql.Quorum).Exec(); err != nil {
				fail("%s: %v", insert, err)
			}
			var k string
			var v int
			if err := session.Query(sel, key).Consistency(gocql.Quorum).Scan(&k, &v); err != nil {
				mismatches = append(mismatches, key+": "+err.Error())
			} else if k == key && v == i {
				roundTrips++
			} else {
				mismatches = append(mismatches, key)
			}
			owners := map[string]bool{}
			for _, h := range replicas(policy, session, ks.name, key, ks.rf) {
				owners[h] = true
			}
			if owners[obs.host(insert, key)] && owners[obs.host(sel, key)] {
				onReplica++
			}
		}
		q := session.Query(sel, "a")
		routingKey, err := q.GetRoutingKey()
		q.Release()
		p := map[string]interface{}{
			"round_trips": roundTrips, "mismatches": mismatches, "coordinator_is_replica": onReplica,
			"routing_key_a": fmt.Sprintf("%x", routingKey),
		}
		if err != nil {
			p["routing_key_error"] = err.Error()
		}
		prepared[ks.name] = p
	}
	out["prepared"] = prepared

	// A composite partition key bound out of order: gocql reads the partition key indexes of the
	// prepared metadata to build the composite routing key.
	cins := "INSERT INTO " + rf2 + ".composite (c, b, a, v) VALUES (?, ?, ?, ?)"
	csel := "SELECT v FROM " + rf2 + ".composite WHERE b = ? AND a = ? AND c = ?"
	compositeReplicas := map[string]interface{}{}
	cRoundTrips, cOnReplica := 0, 0
	for i := 0; i < 5; i++ {
		b := fmt.Sprintf("x%d", i)
		q := session.Query(cins, i, b, i, i).Consistency(gocql.Quorum)
		owners := firstHosts(policy, q, 2)
		compositeReplicas[fmt.Sprintf("%d:%s", i, b)] = owners
		if err := q.Exec(); err != nil {
			fail("%s: %v", cins, err)
		}
		var v int
		if err := session.Query(csel, b, i, i).Consistency(gocql.Quorum).Scan(&v); err == nil && v == i {
			cRoundTrips++
		}
		isOwner := map[string]bool{}
		for _, h := range owners {
			isOwner[h] = true
		}
		if isOwner[obs.host(cins, i)] && isOwner[obs.host(csel, b)] {
			cOnReplica++
		}
	}
	out["composite"] = map[string]interface{}{"replicas": compositeReplicas,
		"round_trips": cRoundTrips, "coordinator_is_replica": cOnReplica}

	// Paging: 500 rows, a scan in pages of 37, every row exactly once.
	put := "INSERT INTO " + rf3 + ".rows (p, c, v) VALUES (?, ?, ?)"
	for p := 0; p < partitions; p++ {
		for c := 0; c < rowsPerPartition; c++ {
			if err := session.Query(put, p, c, fmt.Sprintf("v%d.%d", p, c)).Consistency(gocql.Quorum).Exec(); err != nil {
				fail("%s: %v", put, err)
			}
		}
	}
	seen := map[string]int{}
	var pages []int
	var state []byte
	for {
		iter := session.Query("SELECT p, c, v FROM " + rf3 + ".rows").Consistency(gocql.Quorum).
			PageSize(pageSize).PageState(state).Iter()
		n := 0
		var p, c int
		var v string
		for iter.Scan(&p, &c, &v) {
			seen[fmt.Sprintf("%d.%d", p, c)]++
			n++
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			fail("scan: %v", err)
		}
		pages = append(pages, n)
		if len(state) == 0 {
			break
		}
	}
	rows, duplicates := 0, 0
	for _, n := range pages {
		rows += n
	}
	for _, n := range seen {
		if n > 1 {
			duplicates++
		}
	}
	out["paging"] = map[string]interface{}{"page_size": pageSize, "pages": pages, "rows": rows,
		"distinct": len(seen), "duplicates": duplicates}

	// An error the server sends: a table that does not exist.
	if err := session.Query("SELECT * FROM " + rf3 + ".missing").Exec(); err != nil {
		out["invalid_query"] = fmt.Sprintf("%T: %v", err, err)
	} else {
		out["invalid_query"] = nil
	}
	out["total_ms"] = ms(started)
	emit(out)

	// Second part: the test kills a node, then names it on stdin.
	stdin := bufio.NewReader(os.Stdin)
	line, err := stdin.ReadString('\n')
	down := strings.TrimSpace(line)
	if down == "" {
		return
	}
	after := map[string]interface{}{}
	t = time.Now()
	downState := "UNKNOWN"
	for ms(t) < 20000 {
		policy.mu.Lock()
		h := policy.hosts[down]
		policy.mu.Unlock()
		if h != nil && !h.IsUp() {
			downState = "DOWN"
			break
		} else if h != nil {
			downState = "UP"
		}
		time.Sleep(100 * time.Millisecond)
	}
	after["down_node_state"] = downState
	after["down_seen_ms"] = ms(t)
	var unavailable interface{}
	before := []string{}
	t = time.Now()
	for ms(t) < 20000 {
		err := session.Query("INSERT INTO "+rf3+".kv (k, v) VALUES (?, ?)", "all", 1).
			Consistency(gocql.All).Exec()
		var u *gocql.RequestErrUnavailable
		if errors.As(err, &u) {
			unavailable = map[string]interface{}{"consistency": u.Consistency.String(),
				"required": u.Required, "alive": u.Alive}
			break
		} else if err != nil {
			before = append(before, fmt.Sprintf("%T", err))
		} else {
			before = append(before, "applied")
		}
		time.Sleep(200 * time.Millisecond)
	}
	after["unavailable"] = unavailable
	after["before_unavailable"] = before
	var v int
	err = session.Query("SELECT v FROM " + rf3 + ".kv WHERE k = 'a'").Consistency(gocql.Quorum).Scan(&v)
	after["quorum_read_with_node_down"] = err == nil
	policy.mu.Lock()
	after["events"] = append([]string(nil), policy.events...)
	policy.mu.Unlock()
	emit(after)

	// Third part: the test restarts the node, then says so. gocql brings a node back on its
	// STATUS_CHANGE UP event (or after ReconnectInterval, 60 s).
	if _, err := stdin.ReadString('\n'); err != nil {
		return
	}
	t = time.Now()
	upState := "DOWN"
	for ms(t) < 30000 {
		policy.mu.Lock()
		h := policy.hosts[down]
		policy.mu.Unlock()
		if h != nil && h.IsUp() {
			upState = "UP"
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	back := map[string]interface{}{"state": upState, "up_seen_ms": ms(t)}
	policy.mu.Lock()
	back["events"] = append([]string(nil), policy.events...)
	policy.mu.Unlock()
	emit(back)
}

// watch (--watch KS): prints the hosts, then waits for a line with a host count N (the test adds
// a node meanwhile: TOPOLOGY_CHANGE NEW_NODE), waits until the policy knows N hosts, all up with
// tokens, and prints them with the replicas of KS's keys.
func watch(session *gocql.Session, policy *recordingPolicy, ks string) {
	hosts, events := policy.snapshot()
	emit(map[string]interface{}{"hosts": hosts, "events": events})
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		return
	}
	var expected int
	fmt.Sscan(strings.TrimSpace(line), &expected)
	t := time.Now()
	ready := func() bool {
		policy.mu.Lock()
		defer policy.mu.Unlock()
		if len(policy.hosts) != expected {
			return false
		}
		for _, h := range policy.hosts {
			if !h.IsUp() || len(h.Tokens()) == 0 {
				return false
			}
		}
		return true
	}
	for !ready() && ms(t) < 30000 {
		time.Sleep(50 * time.Millisecond)
	}
	seen := ms(t)
	// the policy rebuilt its token ring when it added the host
	perKey := map[string]interface{}{}
	for _, key := range keys {
		perKey[key] = replicas(policy, session, ks, key, 2)
	}
	hosts, events = policy.snapshot()
	emit(map[string]interface{}{"seen_ms": seen, "hosts": hosts, "events": events, "replicas": perKey})
}

func emit(v interface{}) {
	b, err := json.Marshal(v)
	if err != nil {
		fail("json: %v", err)
	}
	fmt.Println(string(b))
}
