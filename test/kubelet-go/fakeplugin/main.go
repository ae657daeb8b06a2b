// Command liken-fake-dra-plugin is a minimal DRA plugin for testing liken-test-kubelet: it serves the plugin
// registration service and the v1 (and v1beta1) DRAPlugin service on unix sockets and answers every
// NodePrepareResources with a fixed device and CDI id (or, with --kubeconfig, with the claim's allocated devices of
// this driver). Test infrastructure only.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	drav1 "k8s.io/kubelet/pkg/apis/dra/v1"
	drav1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"liken.sh/test/kubelet-go/draapi"
)

var (
	registryDir = flag.String("registry-dir", "/var/lib/kubelet/plugins_registry", "where to put the registration socket")
	pluginDir   = flag.String("plugin-dir", "", "where to put the DRA socket (default <registry-dir>/../plugins/<driver>)")
	driverName  = flag.String("driver-name", "liken.sh", "driver name reported by GetInfo")
	pluginType  = flag.String("type", registerapi.DRAPlugin, "plugin type reported by GetInfo (for negative tests)")
	versions    = flag.String("versions", drav1.DRAPluginService+","+drav1beta1.DRAPluginService, "supported_versions reported by GetInfo, comma-separated")
	uid         = flag.String("uid", "", "pod UID for rolling-update socket names (dra-<uid>.sock, <driver>-<uid>-reg.sock)")
	pool        = flag.String("pool", "node-a", "pool name of the fixed device")
	device      = flag.String("device", "dev0", "device name of the fixed device")
	cdiID       = flag.String("cdi-id", "liken.sh/device=fake0", "CDI id of the fixed device")
	requestName = flag.String("request-name", "", "request name of the fixed device (none when empty)")
	kubeconfig  = flag.String("kubeconfig", "", "when set, GET each claim and return its allocated devices of this driver (CDI id liken.sh/device=<device>)")
	failPrepare = flag.Int("fail-prepare", 0, "answer the first N NodePrepareResources calls with a per-claim error")
	failUnprep  = flag.Int("fail-unprepare", 0, "answer the first N NodeUnprepareResources calls with a per-claim error")
	callsFile   = flag.String("calls-file", "", "append one JSON line per DRA call and registration status to this file")
)

type server struct {
	mu        sync.Mutex
	prepares  int
	unprepars int
	client    kubernetes.Interface
	version   string
}

func (s *server) logCall(v any) {
	data, _ := json.Marshal(v)
	log.Printf("%s", data)
	if *callsFile == "" {
		return
	}
	f, err := os.OpenFile(*callsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		log.Printf("calls file: %v", err)
		return
	}
	defer f.Close()
	f.Write(append(data, '\n'))
}

type claim struct{ Namespace, UID, Name string }

// prepare returns, per claim UID, the devices or an error.
func (s *server) prepare(ctx context.Context, service string, claims []claim) map[string]*drav1.NodePrepareResourceResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepares++
	fail := s.prepares <= *failPrepare
	out := map[string]*drav1.NodePrepareResourceResponse{}
	for _, c := range claims {
		r := &drav1.NodePrepareResourceResponse{}
		switch {
		case fail:
			r.Error = fmt.Sprintf("injected failure %d of %d", s.prepares, *failPrepare)
		case s.client != nil:
			cl, err := s.client.ResourceV1().ResourceClaims(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
			switch {
			case err != nil:
				r.Error = err.Error()
			case string(cl.UID) != c.UID:
				r.Error = fmt.Sprintf("claim UID is %s, not %s", cl.UID, c.UID)
			case cl.Status.Allocation == nil:
				r.Error = "claim not allocated"
			default:
				for _, res := range cl.Status.Allocation.Devices.Results {
					if res.Driver == *driverName {
						r.Devices = append(r.Devices, draapi.NewV1Device([]string{res.Request}, res.Pool, res.Device,
							[]string{*driverName + "/device=" + res.Device}))
					}
				}
			}
		default:
			d := draapi.NewV1Device(nil, *pool, *device, []string{*cdiID})
			if *requestName != "" {
				d.RequestNames = []string{*requestName}
			}
			r.Devices = []*drav1.Device{d}
		}
		out[c.UID] = r
	}
	s.logCall(map[string]any{"call": "NodePrepareResources", "service": service, "claims": claims, "response": out})
	return out
}

func (s *server) unprepare(service string, claims []claim) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unprepars++
	out := map[string]string{}
	for _, c := range claims {
		out[c.UID] = ""
		if s.unprepars <= *failUnprep {
			out[c.UID] = fmt.Sprintf("injected failure %d of %d", s.unprepars, *failUnprep)
		}
	}
	s.logCall(map[string]any{"call": "NodeUnprepareResources", "service": service, "claims": claims, "errors": out})
	return out
}

type v1Server struct {
	drav1.UnimplementedDRAPluginServer
	s *server
}

func (v v1Server) NodePrepareResources(ctx context.Context, req *drav1.NodePrepareResourcesRequest) (*drav1.NodePrepareResourcesResponse, error) {
	var cs []claim
	for _, c := range req.GetClaims() {
		cs = append(cs, claim{c.GetNamespace(), draapi.V1ClaimUID(c), c.GetName()})
	}
	return &drav1.NodePrepareResourcesResponse{Claims: v.s.prepare(ctx, drav1.DRAPluginService, cs)}, nil
}

func (v v1Server) NodeUnprepareResources(ctx context.Context, req *drav1.NodeUnprepareResourcesRequest) (*drav1.NodeUnprepareResourcesResponse, error) {
	var cs []claim
	for _, c := range req.GetClaims() {
		cs = append(cs, claim{c.GetNamespace(), draapi.V1ClaimUID(c), c.GetName()})
	}
	resp := &drav1.NodeUnprepareResourcesResponse{Claims: map[string]*drav1.NodeUnprepareResourceResponse{}}
	for uid, e := range v.s.unprepare(drav1.DRAPluginService, cs) {
		resp.Claims[uid] = &drav1.NodeUnprepareResourceResponse{Error: e}
	}
	return resp, nil
}

type v1beta1Server struct {
	drav1beta1.UnimplementedDRAPluginServer
	s *server
}

func (v v1beta1Server) NodePrepareResources(ctx context.Context, req *drav1beta1.NodePrepareResourcesRequest) (*drav1beta1.NodePrepareResourcesResponse, error) {
	var cs []claim
	for _, c := range req.GetClaims() {
		cs = append(cs, claim{c.GetNamespace(), draapi.V1Beta1ClaimUID(c), c.GetName()})
	}
	resp := &drav1beta1.NodePrepareResourcesResponse{Claims: map[string]*drav1beta1.NodePrepareResourceResponse{}}
	for uid, r := range v.s.prepare(ctx, drav1beta1.DRAPluginService, cs) {
		br := &drav1beta1.NodePrepareResourceResponse{Error: r.Error}
		for _, d := range r.Devices {
			br.Devices = append(br.Devices, draapi.NewV1Beta1Device(d.RequestNames, d.PoolName, d.DeviceName,
				draapi.V1DeviceCDIIDs(d)))
		}
		resp.Claims[uid] = br
	}
	return resp, nil
}

func (v v1beta1Server) NodeUnprepareResources(ctx context.Context, req *drav1beta1.NodeUnprepareResourcesRequest) (*drav1beta1.NodeUnprepareResourcesResponse, error) {
	var cs []claim
	for _, c := range req.GetClaims() {
		cs = append(cs, claim{c.GetNamespace(), draapi.V1Beta1ClaimUID(c), c.GetName()})
	}
	resp := &drav1beta1.NodeUnprepareResourcesResponse{Claims: map[string]*drav1beta1.NodeUnprepareResourceResponse{}}
	for uid, e := range v.s.unprepare(drav1beta1.DRAPluginService, cs) {
		resp.Claims[uid] = &drav1beta1.NodeUnprepareResourceResponse{Error: e}
	}
	return resp, nil
}

type regServer struct {
	registerapi.UnimplementedRegistrationServer
	s        *server
	endpoint string
}

func (r regServer) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	var vs []string
	for _, v := range strings.Split(*versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			vs = append(vs, v)
		}
	}
	return &registerapi.PluginInfo{Type: *pluginType, Name: *driverName, Endpoint: r.endpoint, SupportedVersions: vs}, nil
}

func (r regServer) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	r.s.logCall(map[string]any{"call": "NotifyRegistrationStatus", "registered": st.GetPluginRegistered(), "error": st.GetError()})
	return &registerapi.RegistrationStatusResponse{}, nil
}

func listen(path string) net.Listener {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	os.Remove(path) // stale socket
	l, err := net.Listen("unix", path)
	if err != nil {
		log.Fatal(err)
	}
	return l
}

func main() {
	flag.Parse()
	log.SetPrefix("fake-dra-plugin: ")
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	s := &server{}
	if *kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if err != nil {
			log.Fatal(err)
		}
		s.client = kubernetes.NewForConfigOrDie(cfg)
	}
	dir := *pluginDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(*registryDir)), "plugins", *driverName)
	}
	draName, regName := "dra.sock", *driverName+"-reg.sock"
	if *uid != "" {
		draName, regName = "dra-"+*uid+".sock", *driverName+"-"+*uid+"-reg.sock"
	}
	draPath, regPath := filepath.Join(dir, draName), filepath.Join(*registryDir, regName)

	// The DRA service first, so that it answers by the time the kubelet connects after registration.
	draSrv := grpc.NewServer()
	drav1.RegisterDRAPluginServer(draSrv, v1Server{s: s})
	drav1beta1.RegisterDRAPluginServer(draSrv, v1beta1Server{s: s})
	draL := listen(draPath)
	go draSrv.Serve(draL)
	regSrv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(regSrv, regServer{s: s, endpoint: draPath})
	regL := listen(regPath)
	go regSrv.Serve(regL)
	log.Printf("serving %s (registration %s, DRA %s)", *driverName, regPath, draPath)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
	// Remove the registration socket first: the kubelet deregisters the plugin.
	regSrv.Stop()
	os.Remove(regPath)
	done := make(chan struct{})
	go func() { draSrv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		draSrv.Stop()
	}
	os.Remove(draPath)
	log.Printf("stopped")
}
