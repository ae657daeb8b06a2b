// Command liken-test-kubelet plays the kubelet's side of Dynamic Resource Allocation for integration tests: it
// registers DRA plugins through the plugin-registration socket directory, watches the pods bound to one node, and
// calls NodePrepareResources / NodeUnprepareResources on the registered driver, recording everything in a JSON
// state file. It runs no containers. Test infrastructure only.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the API server (default $KUBECONFIG)")
	node := flag.String("node-name", "node-a", "the node this kubelet plays")
	registryDir := flag.String("registry-dir", "/var/lib/kubelet/plugins_registry", "the kubelet's plugin registration directory to watch for sockets")
	stateFile := flag.String("state-file", "", "JSON state file, rewritten atomically after every change (required)")
	retry := flag.Duration("retry-interval", time.Second, "retry interval for failed prepare/unprepare/registration and for re-checking waiting pods")
	driverName := flag.String("driver-name", "liken.sh", "accept only plugins with this name (\"\" accepts any DRA plugin)")
	podStatus := flag.Bool("pod-status", true, "patch prepared pods' status to Running/Ready, as if the containers had started")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	log.SetPrefix("test-kubelet: ")
	if *stateFile == "" {
		fmt.Fprintln(os.Stderr, "--state-file is required")
		os.Exit(2)
	}
	if *retry <= 0 {
		fmt.Fprintln(os.Stderr, "--retry-interval must be positive")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	cfg.UserAgent = "liken-test-kubelet/" + *node
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatalf("client: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	kick := make(chan struct{}, 1)
	trigger := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	rec := newRecorder(*stateFile, *node)
	store := newPluginStore(trigger)
	rec.store = store
	rec.flush()

	w := &watcher{dir: *registryDir, driverName: *driverName, retry: *retry, store: store, rec: rec}
	go w.run(ctx)

	podFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", *node).String()
	}))
	claimFactory := informers.NewSharedInformerFactory(client, 0)
	podInformer := podFactory.Core().V1().Pods()
	claimInformer := claimFactory.Resource().V1().ResourceClaims()
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { trigger() },
		UpdateFunc: func(any, any) { trigger() },
		DeleteFunc: func(any) { trigger() },
	}
	if _, err := podInformer.Informer().AddEventHandler(handler); err != nil {
		log.Fatal(err)
	}
	if _, err := claimInformer.Informer().AddEventHandler(handler); err != nil {
		log.Fatal(err)
	}
	r := &reconciler{node: *node, client: client, pods: podInformer.Lister(), claims: claimInformer.Lister(),
		store: store, rec: rec, patchStatus: *podStatus}
	podFactory.Start(ctx.Done())
	claimFactory.Start(ctx.Done())
	log.Printf("node %s: watching %s for plugins, state in %s", *node, *registryDir, *stateFile)
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced, claimInformer.Informer().HasSynced) {
		log.Printf("stopped before the informers synced")
		rec.flush()
		store.closeAll()
		return
	}
	r.synced = true
	log.Printf("informers synced")

	t := time.NewTicker(*retry)
	defer t.Stop()
	for {
		r.reconcile(ctx)
		select {
		case <-ctx.Done():
			log.Printf("shutting down")
			podFactory.Shutdown()
			claimFactory.Shutdown()
			store.closeAll()
			rec.flush()
			return
		case <-kick:
		case <-t.C:
		}
	}
}
