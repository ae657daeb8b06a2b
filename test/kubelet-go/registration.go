package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	drav1 "k8s.io/kubelet/pkg/apis/dra/v1"
	drav1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"liken.sh/test/kubelet-go/draapi"
)

// DRA services this kubelet speaks, in no particular order: the plugin's supported_versions order decides.
var knownServices = map[string]bool{
	drav1.DRAPluginService:      true, // "v1.DRAPlugin"
	drav1beta1.DRAPluginService: true, // "v1beta1.DRAPlugin"
}

const registrationCallTimeout = 10 * time.Second

// claimRef is what the kubelet sends for each claim.
type claimRef struct {
	Namespace string
	UID       string
	Name      string
}

// deviceResult is one prepared device as the driver returned it.
type deviceResult struct {
	Driver       string   `json:"driver"`
	RequestNames []string `json:"requestNames"`
	PoolName     string   `json:"poolName"`
	DeviceName   string   `json:"deviceName"`
	CDIDeviceIDs []string `json:"cdiDeviceIds"`
	ShareID      *string  `json:"shareId,omitempty"`
}

type prepareResult struct {
	Devices []deviceResult
	Err     string
}

// draClient hides the DRA API version that a plugin registered with.
type draClient interface {
	Prepare(ctx context.Context, claims []claimRef) (map[string]prepareResult, error)
	Unprepare(ctx context.Context, claims []claimRef) (map[string]string, error)
}

type v1Client struct{ c drav1.DRAPluginClient }

func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (v v1Client) Prepare(ctx context.Context, claims []claimRef) (map[string]prepareResult, error) {
	req := &drav1.NodePrepareResourcesRequest{}
	for _, c := range claims {
		req.Claims = append(req.Claims, draapi.NewV1Claim(c.Namespace, c.UID, c.Name))
	}
	resp, err := v.c.NodePrepareResources(ctx, req)
	if err != nil {
		return nil, err
	}
	out := map[string]prepareResult{}
	for uid, r := range resp.GetClaims() {
		pr := prepareResult{Err: r.GetError()}
		for _, d := range r.GetDevices() {
			dr := deviceResult{RequestNames: strs(d.GetRequestNames()), PoolName: d.GetPoolName(),
				DeviceName: d.GetDeviceName(), CDIDeviceIDs: strs(draapi.V1DeviceCDIIDs(d))}
			dr.ShareID = draapi.V1DeviceShareID(d)
			pr.Devices = append(pr.Devices, dr)
		}
		out[uid] = pr
	}
	return out, nil
}

func (v v1Client) Unprepare(ctx context.Context, claims []claimRef) (map[string]string, error) {
	req := &drav1.NodeUnprepareResourcesRequest{}
	for _, c := range claims {
		req.Claims = append(req.Claims, draapi.NewV1Claim(c.Namespace, c.UID, c.Name))
	}
	resp, err := v.c.NodeUnprepareResources(ctx, req)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for uid, r := range resp.GetClaims() {
		out[uid] = r.GetError()
	}
	return out, nil
}

type v1beta1Client struct{ c drav1beta1.DRAPluginClient }

func (v v1beta1Client) Prepare(ctx context.Context, claims []claimRef) (map[string]prepareResult, error) {
	req := &drav1beta1.NodePrepareResourcesRequest{}
	for _, c := range claims {
		req.Claims = append(req.Claims, draapi.NewV1Beta1Claim(c.Namespace, c.UID, c.Name))
	}
	resp, err := v.c.NodePrepareResources(ctx, req)
	if err != nil {
		return nil, err
	}
	out := map[string]prepareResult{}
	for uid, r := range resp.GetClaims() {
		pr := prepareResult{Err: r.GetError()}
		for _, d := range r.GetDevices() {
			pr.Devices = append(pr.Devices, deviceResult{RequestNames: strs(d.GetRequestNames()), PoolName: d.GetPoolName(),
				DeviceName: d.GetDeviceName(), CDIDeviceIDs: strs(draapi.V1Beta1DeviceCDIIDs(d))})
		}
		out[uid] = pr
	}
	return out, nil
}

func (v v1beta1Client) Unprepare(ctx context.Context, claims []claimRef) (map[string]string, error) {
	req := &drav1beta1.NodeUnprepareResourcesRequest{}
	for _, c := range claims {
		req.Claims = append(req.Claims, draapi.NewV1Beta1Claim(c.Namespace, c.UID, c.Name))
	}
	resp, err := v.c.NodeUnprepareResources(ctx, req)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for uid, r := range resp.GetClaims() {
		out[uid] = r.GetError()
	}
	return out, nil
}

// plugin is one successful registration.
type plugin struct {
	Socket       string
	Name         string
	Endpoint     string
	Version      string
	RegisteredAt time.Time
	conn         *grpc.ClientConn
	client       draClient
}

// pluginStore holds the registered plugins per driver name. Like the kubelet (rolling-update support), a driver may
// have several registrations at once; calls go to the most recently registered one, and when it goes away the
// previous one takes over.
type pluginStore struct {
	mu       sync.Mutex
	plugins  map[string][]*plugin // driver name -> registrations, oldest first
	onChange func()
}

func newPluginStore(onChange func()) *pluginStore {
	return &pluginStore{plugins: map[string][]*plugin{}, onChange: onChange}
}

func (s *pluginStore) get(driver string) *plugin {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.plugins[driver]
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

func (s *pluginStore) add(p *plugin) {
	s.mu.Lock()
	s.plugins[p.Name] = append(s.plugins[p.Name], p)
	s.mu.Unlock()
	s.onChange()
}

func (s *pluginStore) removeSocket(socket string) *plugin {
	s.mu.Lock()
	var removed *plugin
	for name, l := range s.plugins {
		for i, p := range l {
			if p.Socket == socket {
				removed = p
				l = append(l[:i:i], l[i+1:]...)
				break
			}
		}
		if len(l) == 0 {
			delete(s.plugins, name)
		} else {
			s.plugins[name] = l
		}
	}
	s.mu.Unlock()
	if removed != nil {
		removed.conn.Close()
		s.onChange()
	}
	return removed
}

// snapshot returns, per driver, the registration in use followed by older ones.
func (s *pluginStore) snapshot() map[string][]*plugin {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]*plugin{}
	for name, l := range s.plugins {
		for i := len(l) - 1; i >= 0; i-- {
			out[name] = append(out[name], l[i])
		}
	}
	return out
}

func (s *pluginStore) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.plugins {
		for _, p := range l {
			p.conn.Close()
		}
	}
}

func dialUnix(path string) (*grpc.ClientConn, error) {
	return grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// socketID tells a re-created socket file apart from the old one with the same name.
type socketID struct {
	ino   uint64
	mtime time.Time
}

type socketEntry struct {
	id         socketID
	registered bool
	rejected   bool // validation failed: not retried until the file changes
	nextTry    time.Time
}

// watcher plays the kubelet's plugin watcher on the registry directory.
type watcher struct {
	dir        string
	driverName string // "" accepts any
	retry      time.Duration
	store      *pluginStore
	rec        *recorder
	sockets    map[string]*socketEntry
}

func (w *watcher) run(ctx context.Context) {
	w.sockets = map[string]*socketEntry{}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		w.scan(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *watcher) scan(ctx context.Context) {
	entries, err := os.ReadDir(w.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Printf("registry dir %s: %v", w.dir, err)
	}
	type found struct {
		path string
		id   socketID
	}
	var present []found
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Name()[0] == '.' || e.Type()&os.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(w.dir, e.Name())
		fi, err := os.Stat(path)
		if err != nil || fi.Mode()&os.ModeSocket == 0 {
			continue
		}
		id := socketID{mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			id.ino = st.Ino
		}
		present = append(present, found{path, id})
		seen[path] = true
	}
	// Gone or replaced sockets: deregister.
	for path, se := range w.sockets {
		replaced := false
		if seen[path] {
			for _, f := range present {
				if f.path == path && f.id != se.id {
					replaced = true
				}
			}
		}
		if !seen[path] || replaced {
			if p := w.store.removeSocket(path); p != nil {
				log.Printf("plugin %s deregistered (socket %s %s)", p.Name, path, map[bool]string{true: "replaced", false: "removed"}[replaced])
				w.rec.deregistered(p, path)
			}
			delete(w.sockets, path)
		}
	}
	// New sockets, oldest first, so that the newest registration ends up in use.
	sort.Slice(present, func(i, j int) bool { return present[i].id.mtime.Before(present[j].id.mtime) })
	now := time.Now()
	for _, f := range present {
		se := w.sockets[f.path]
		if se == nil {
			se = &socketEntry{id: f.id}
			w.sockets[f.path] = se
		}
		if se.registered || se.rejected || now.Before(se.nextTry) {
			continue
		}
		p, rejected, err := w.register(ctx, f.path)
		switch {
		case err == nil:
			se.registered = true
			w.store.add(p)
			log.Printf("plugin %s registered: socket %s endpoint %s service %s", p.Name, f.path, p.Endpoint, p.Version)
			w.rec.registered(p)
		case rejected:
			se.rejected = true
			log.Printf("plugin at %s rejected: %v", f.path, err)
			w.rec.registrationFailed(f.path, err.Error(), true)
		default:
			se.nextTry = now.Add(w.retry)
			log.Printf("plugin at %s: %v (retrying)", f.path, err)
			w.rec.registrationFailed(f.path, err.Error(), false)
		}
	}
}

// register does what the kubelet does with a new registration socket. rejected says that the plugin answered but is
// not acceptable (it was told so via NotifyRegistrationStatus).
func (w *watcher) register(ctx context.Context, socket string) (p *plugin, rejected bool, err error) {
	conn, err := dialUnix(socket)
	if err != nil {
		return nil, false, err
	}
	defer conn.Close()
	rc := registerapi.NewRegistrationClient(conn)
	cctx, cancel := context.WithTimeout(ctx, registrationCallTimeout)
	defer cancel()
	info, err := rc.GetInfo(cctx, &registerapi.InfoRequest{})
	if err != nil {
		return nil, false, fmt.Errorf("GetInfo: %w", err)
	}
	notify := func(ok bool, msg string) error {
		nctx, ncancel := context.WithTimeout(ctx, registrationCallTimeout)
		defer ncancel()
		_, err := rc.NotifyRegistrationStatus(nctx, &registerapi.RegistrationStatus{PluginRegistered: ok, Error: msg})
		return err
	}
	verr := func() error {
		if info.GetType() != registerapi.DRAPlugin {
			return fmt.Errorf("plugin type %q is not %q", info.GetType(), registerapi.DRAPlugin)
		}
		if info.GetName() == "" {
			return errors.New("empty plugin name")
		}
		if w.driverName != "" && info.GetName() != w.driverName {
			return fmt.Errorf("plugin name %q is not the expected driver %q", info.GetName(), w.driverName)
		}
		if len(info.GetSupportedVersions()) == 0 {
			return errors.New("empty supported_versions")
		}
		return nil
	}()
	version := ""
	if verr == nil {
		for _, v := range info.GetSupportedVersions() {
			if knownServices[v] {
				version = v
				break
			}
		}
		if version == "" {
			verr = fmt.Errorf("none of the supported versions %v is a DRA service this kubelet supports", info.GetSupportedVersions())
		}
	}
	endpoint := info.GetEndpoint()
	if endpoint == "" {
		endpoint = socket
	}
	var dconn *grpc.ClientConn
	if verr == nil {
		dconn, verr = dialUnix(endpoint)
	}
	if verr != nil {
		if nerr := notify(false, verr.Error()); nerr != nil {
			log.Printf("NotifyRegistrationStatus(false) to %s: %v", socket, nerr)
		}
		return nil, true, verr
	}
	if err := notify(true, ""); err != nil {
		dconn.Close()
		return nil, false, fmt.Errorf("NotifyRegistrationStatus: %w", err)
	}
	p = &plugin{Socket: socket, Name: info.GetName(), Endpoint: endpoint, Version: version, RegisteredAt: time.Now(), conn: dconn}
	if version == drav1.DRAPluginService {
		p.client = v1Client{drav1.NewDRAPluginClient(dconn)}
	} else {
		p.client = v1beta1Client{drav1beta1.NewDRAPluginClient(dconn)}
	}
	return p, false, nil
}
