package main

import (
	"bytes"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The state file: rewritten atomically (temp file + rename) after every change. See README.md for the format.
type stateFile struct {
	Node    string    `json:"node"`
	Seq     uint64    `json:"seq"` // increases with every write
	Updated time.Time `json:"updated"`
	PID     int       `json:"pid"`
	// Synced: the pod and claim informers have synced; before that the pods/claims below are not meaningful.
	Synced bool `json:"synced"`
	// Plugins: per driver name, its registrations; the first one is the one in use (the newest).
	Plugins map[string][]pluginState `json:"plugins"`
	// Registrations: history of registration attempts and deregistrations (last 200).
	Registrations []registrationEvent `json:"registrations"`
	// Pods: by "namespace/name" (see podState).
	Pods json.RawMessage `json:"pods"`
	// Claims: currently prepared claims (and ones waiting for unprepare), by claim UID.
	Claims json.RawMessage `json:"claims"`
	// Unprepared: history of successful NodeUnprepareResources, per claim (last 500).
	Unprepared json.RawMessage `json:"unprepared"`
	Counters   json.RawMessage `json:"counters"`
}

type pluginState struct {
	Socket       string    `json:"socket"`
	Endpoint     string    `json:"endpoint"`
	Version      string    `json:"version"`
	RegisteredAt time.Time `json:"registeredAt"`
}

type registrationEvent struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"` // "registered", "rejected", "failed" (will retry), "deregistered"
	Socket   string    `json:"socket"`
	Name     string    `json:"name,omitempty"`
	Endpoint string    `json:"endpoint,omitempty"`
	Version  string    `json:"version,omitempty"`
	Error    string    `json:"error,omitempty"`
}

type recorder struct {
	mu    sync.Mutex
	path  string
	st    stateFile
	store *pluginStore
}

func newRecorder(path, node string) *recorder {
	return &recorder{path: path, st: stateFile{Node: node, PID: os.Getpid(), Plugins: map[string][]pluginState{},
		Registrations: []registrationEvent{}, Pods: json.RawMessage("{}"), Claims: json.RawMessage("{}"),
		Unprepared: json.RawMessage("[]"), Counters: json.RawMessage("{}")}}
}

func (r *recorder) addRegistration(e registrationEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Time = time.Now().UTC()
	r.st.Registrations = append(r.st.Registrations, e)
	if n := len(r.st.Registrations); n > 200 {
		r.st.Registrations = r.st.Registrations[n-200:]
	}
	r.refreshPluginsLocked()
	r.flushLocked()
}

func (r *recorder) registered(p *plugin) {
	r.addRegistration(registrationEvent{Event: "registered", Socket: p.Socket, Name: p.Name, Endpoint: p.Endpoint, Version: p.Version})
}

func (r *recorder) deregistered(p *plugin, socket string) {
	r.addRegistration(registrationEvent{Event: "deregistered", Socket: socket, Name: p.Name, Endpoint: p.Endpoint, Version: p.Version})
}

func (r *recorder) registrationFailed(socket, msg string, rejected bool) {
	ev := "failed"
	if rejected {
		ev = "rejected"
	}
	r.addRegistration(registrationEvent{Event: ev, Socket: socket, Error: msg})
}

func (r *recorder) refreshPluginsLocked() {
	if r.store == nil {
		return
	}
	out := map[string][]pluginState{}
	for name, l := range r.store.snapshot() {
		for _, p := range l {
			out[name] = append(out[name], pluginState{Socket: p.Socket, Endpoint: p.Endpoint, Version: p.Version, RegisteredAt: p.RegisteredAt.UTC()})
		}
	}
	r.st.Plugins = out
}

// setModel replaces the pod/claim part of the state (already marshaled by the reconciler) and writes the file.
func (r *recorder) setModel(synced bool, pods, claims, unprepared, counters []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.Seq > 0 && r.st.Synced == synced && bytes.Equal(r.st.Pods, pods) && bytes.Equal(r.st.Claims, claims) &&
		bytes.Equal(r.st.Unprepared, unprepared) && bytes.Equal(r.st.Counters, counters) {
		return // nothing changed
	}
	r.st.Synced = synced
	r.st.Pods, r.st.Claims, r.st.Unprepared, r.st.Counters = pods, claims, unprepared, counters
	r.refreshPluginsLocked()
	r.flushLocked()
}

func (r *recorder) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshPluginsLocked()
	r.flushLocked()
}

func (r *recorder) flushLocked() {
	r.st.Seq++
	r.st.Updated = time.Now().UTC()
	data, err := json.MarshalIndent(&r.st, "", "  ")
	if err != nil {
		log.Printf("state: marshal: %v", err)
		return
	}
	data = append(data, '\n')
	if err := writeAtomic(r.path, data); err != nil {
		log.Printf("state: %v", err)
	}
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
