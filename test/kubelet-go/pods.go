package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
)

const draCallTimeout = 45 * time.Second // the kubelet's per-call timeout for DRA plugins

// Pod states in the state file.
const (
	podWaiting     = "waiting"     // claims not (yet) allocated/reserved, or their names not yet in the pod status
	podPreparing   = "preparing"   // NodePrepareResources failed; retried every --retry-interval
	podPrepared    = "prepared"    // every claim prepared
	podUnpreparing = "unpreparing" // pod deleted/terminating/terminal; waiting for NodeUnprepareResources
	podUnprepared  = "unprepared"  // released: every claim unprepared or still held by another pod
)

type podClaimRef struct {
	PodClaimName string `json:"podClaimName"` // spec.resourceClaims[].name ("" for the extended-resource claim)
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	UID          string `json:"uid"`
}

type podEntry struct {
	Namespace     string        `json:"namespace"`
	Name          string        `json:"name"`
	UID           string        `json:"uid"`
	State         string        `json:"state"`
	Reason        string        `json:"reason,omitempty"` // why waiting, or the last error
	Attempts      int           `json:"prepareAttempts"`
	ClaimRefs     []podClaimRef `json:"-"`
	PreparedAt    *time.Time    `json:"preparedAt,omitempty"`
	UnpreparedAt  *time.Time    `json:"unpreparedAt,omitempty"`
	StatusPatched bool          `json:"statusPatched"`
	Terminating   bool          `json:"terminating"`  // deletionTimestamp set or phase Succeeded/Failed
	Gone          bool          `json:"gone"`         // the pod object no longer exists
	FinalDeleted  bool          `json:"finalDeleted"` // this kubelet deleted it (grace period 0) after unprepare
	created       time.Time
	lastOut       map[string]claimOut // claim UID -> last prepared view, kept after unprepare
}

type driverPrep struct {
	Version    string         `json:"version"` // DRA service that served the prepare, e.g. "v1.DRAPlugin"
	Socket     string         `json:"registrationSocket"`
	Prepared   bool           `json:"prepared"`
	Devices    []deviceResult `json:"devices"`
	PreparedAt *time.Time     `json:"preparedAt,omitempty"`
	Error      string         `json:"error,omitempty"`
}

type claimEntry struct {
	Namespace  string                 `json:"namespace"`
	Name       string                 `json:"name"`
	UID        string                 `json:"uid"`
	Prepared   bool                   `json:"prepared"`
	Drivers    map[string]*driverPrep `json:"drivers"` // per driver of the allocation
	Pods       map[string]string      `json:"pods"`    // pod UID -> "namespace/name" of the pods holding it
	PreparedAt *time.Time             `json:"preparedAt,omitempty"`
	Error      string                 `json:"error,omitempty"` // last unprepare error
}

type unpreparedRecord struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	UID       string            `json:"uid"`
	Versions  map[string]string `json:"versions"` // driver -> DRA service used for the unprepare
	Pods      []string          `json:"pods"`     // pods that had held it
	At        time.Time         `json:"at"`
}

type counters struct {
	PrepareCalls         int `json:"prepareCalls"`
	PrepareCallErrors    int `json:"prepareCallErrors"`  // gRPC errors (incl. timeouts, driver not registered)
	PrepareClaimErrors   int `json:"prepareClaimErrors"` // per-claim errors in a successful response
	UnprepareCalls       int `json:"unprepareCalls"`
	UnprepareCallErrors  int `json:"unprepareCallErrors"`
	UnprepareClaimErrors int `json:"unprepareClaimErrors"`
	StatusPatches        int `json:"statusPatches"`
	FinalDeletes         int `json:"finalDeletes"`
}

type reconciler struct {
	node        string
	client      kubernetes.Interface
	pods        corelisters.PodLister
	claims      resourcelisters.ResourceClaimLister
	store       *pluginStore
	rec         *recorder
	patchStatus bool

	synced     bool
	podEntries map[string]*podEntry   // by pod UID
	claimState map[string]*claimEntry // by claim UID
	unprepared []unpreparedRecord
	cnt        counters
}

func (r *reconciler) pluginFor(driver string) (*plugin, error) {
	p := r.store.get(driver)
	if p == nil {
		return nil, fmt.Errorf("DRA driver %s is not registered", driver)
	}
	return p, nil
}

func podKey(ns, name string) string { return ns + "/" + name }

func podTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// resolveClaims returns the pod's claims (name only) or why they are not known yet.
func resolveClaims(pod *corev1.Pod) ([]podClaimRef, string) {
	var out []podClaimRef
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimName != nil {
			out = append(out, podClaimRef{PodClaimName: pc.Name, Namespace: pod.Namespace, Name: *pc.ResourceClaimName})
			continue
		}
		found := false
		for _, st := range pod.Status.ResourceClaimStatuses {
			if st.Name == pc.Name {
				found = true
				if st.ResourceClaimName != nil { // nil: no claim needed
					out = append(out, podClaimRef{PodClaimName: pc.Name, Namespace: pod.Namespace, Name: *st.ResourceClaimName})
				}
			}
		}
		if !found {
			return nil, fmt.Sprintf("claim name for pod claim %q not yet in status.resourceClaimStatuses", pc.Name)
		}
	}
	if ext := pod.Status.ExtendedResourceClaimStatus; ext != nil && ext.ResourceClaimName != "" {
		out = append(out, podClaimRef{Namespace: pod.Namespace, Name: ext.ResourceClaimName})
	}
	return out, ""
}

func reservedFor(claim *resourceapi.ResourceClaim, pod *corev1.Pod) bool {
	for _, ref := range claim.Status.ReservedFor {
		if ref.UID == pod.UID && ref.Resource == "pods" && ref.APIGroup == "" {
			return true
		}
	}
	return false
}

func ownedBy(claim *resourceapi.ResourceClaim, pod *corev1.Pod) bool {
	for _, o := range claim.OwnerReferences {
		if o.UID == pod.UID && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// checkClaim reports why a claim cannot be prepared for the pod ("" when it can).
func checkClaim(claim *resourceapi.ResourceClaim, pod *corev1.Pod, fromTemplate bool) string {
	switch {
	case claim.Status.Allocation == nil:
		return fmt.Sprintf("claim %s not allocated", claim.Name)
	case !reservedFor(claim, pod):
		return fmt.Sprintf("claim %s not reserved for the pod", claim.Name)
	case fromTemplate && !ownedBy(claim, pod):
		return fmt.Sprintf("claim %s was not created for the pod", claim.Name)
	case claim.DeletionTimestamp != nil:
		return fmt.Sprintf("claim %s is being deleted", claim.Name)
	}
	return ""
}

func allocationDrivers(claim *resourceapi.ResourceClaim) []string {
	set := map[string]bool{}
	for _, res := range claim.Status.Allocation.Devices.Results {
		set[res.Driver] = true
	}
	var out []string
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func (r *reconciler) reconcile(ctx context.Context) {
	if r.podEntries == nil {
		r.podEntries = map[string]*podEntry{}
		r.claimState = map[string]*claimEntry{}
	}
	pods, err := r.pods.List(labels.Everything())
	if err != nil {
		log.Printf("list pods: %v", err)
		return
	}
	live := map[string]*corev1.Pod{}
	for _, p := range pods {
		if p.Spec.NodeName != r.node {
			continue
		}
		live[string(p.UID)] = p
		if r.podEntries[string(p.UID)] == nil {
			r.podEntries[string(p.UID)] = &podEntry{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), State: podWaiting, created: time.Now()}
			log.Printf("pod %s/%s (%s) on node %s", p.Namespace, p.Name, p.UID, r.node)
		}
	}

	// Release pods that are gone, being deleted or terminal.
	for uid, e := range r.podEntries {
		p := live[uid]
		e.Gone = p == nil
		e.Terminating = p == nil || podTerminating(p)
		if !e.Terminating {
			continue
		}
		if e.State == podWaiting || e.State == podPreparing || e.State == podPrepared {
			log.Printf("pod %s/%s: releasing (gone=%v)", e.Namespace, e.Name, e.Gone)
			for _, c := range e.ClaimRefs {
				if ce := r.claimState[c.UID]; ce != nil {
					delete(ce.Pods, uid)
				}
			}
			e.State = podUnpreparing
			e.Reason = ""
		}
	}
	r.unprepareUnused(ctx)
	now := time.Now().UTC()
	for uid, e := range r.podEntries {
		if e.State == podUnpreparing {
			done := true
			for _, c := range e.ClaimRefs {
				if ce := r.claimState[c.UID]; ce != nil && len(ce.Pods) == 0 {
					done = false
				}
			}
			if done {
				e.State = podUnprepared
				e.UnpreparedAt = &now
				e.Reason = ""
				log.Printf("pod %s/%s: unprepared", e.Namespace, e.Name)
			}
		}
		if e.State == podUnprepared && !e.Gone && !e.FinalDeleted {
			if p := live[uid]; p != nil && p.DeletionTimestamp != nil {
				r.finalDelete(ctx, e)
			}
		}
	}
	// Forget released pods whose name is reused by a newer pod (keeps the state file keyed by namespace/name).
	for uid, e := range r.podEntries {
		if e.State != podUnprepared || !e.Gone {
			continue
		}
		for _, o := range r.podEntries {
			if o != e && o.Namespace == e.Namespace && o.Name == e.Name && o.created.After(e.created) {
				delete(r.podEntries, uid)
				break
			}
		}
	}

	// Prepare.
	for uid, e := range r.podEntries {
		p := live[uid]
		if p == nil || e.Terminating || (e.State != podWaiting && e.State != podPreparing) {
			continue
		}
		r.preparePod(ctx, p, e)
	}
	// Pod status.
	if r.patchStatus {
		for uid, e := range r.podEntries {
			if p := live[uid]; p != nil && e.State == podPrepared && !e.StatusPatched && !e.Terminating {
				r.patchRunning(ctx, p, e)
			}
		}
	}
	r.write()
}

func (r *reconciler) preparePod(ctx context.Context, pod *corev1.Pod, e *podEntry) {
	refs, reason := resolveClaims(pod)
	if reason != "" {
		r.setWaiting(e, reason)
		return
	}
	fromTemplate := map[string]bool{}
	for _, pc := range pod.Spec.ResourceClaims {
		fromTemplate[pc.Name] = pc.ResourceClaimName == nil
	}
	// Every claim must be allocated and reserved for the pod before anything is prepared.
	cached := make([]*resourceapi.ResourceClaim, len(refs))
	for i, ref := range refs {
		c, err := r.claims.ResourceClaims(ref.Namespace).Get(ref.Name)
		if err != nil {
			r.setWaiting(e, fmt.Sprintf("claim %s: %v", ref.Name, err))
			return
		}
		if why := checkClaim(c, pod, fromTemplate[ref.PodClaimName] && ref.PodClaimName != ""); why != "" {
			r.setWaiting(e, why)
			return
		}
		cached[i] = c
		refs[i].UID = string(c.UID)
	}
	e.ClaimRefs = refs
	key := podKey(pod.Namespace, pod.Name)

	// Claims not yet prepared: GET each from the API server (like the kubelet) and group them by driver.
	byDriver := map[string][]claimRef{}
	var errs []string
	for i, ref := range refs {
		ce := r.claimState[ref.UID]
		if ce != nil && ce.Prepared {
			ce.Pods[string(pod.UID)] = key
			continue
		}
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		c, err := r.client.ResourceV1().ResourceClaims(ref.Namespace).Get(gctx, ref.Name, metav1.GetOptions{})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Sprintf("get claim %s: %v", ref.Name, err))
			continue
		}
		if c.UID != cached[i].UID {
			errs = append(errs, fmt.Sprintf("claim %s: UID %s from the API server, expected %s", ref.Name, c.UID, cached[i].UID))
			continue
		}
		if why := checkClaim(c, pod, fromTemplate[ref.PodClaimName] && ref.PodClaimName != ""); why != "" {
			errs = append(errs, why)
			continue
		}
		if ce == nil {
			// Recorded before the call, like the kubelet's checkpoint: a claim that a driver may have prepared gets
			// unprepared even if the pod goes away before the prepare succeeds.
			ce = &claimEntry{Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID, Drivers: map[string]*driverPrep{}, Pods: map[string]string{}}
			for _, d := range allocationDrivers(c) {
				ce.Drivers[d] = &driverPrep{}
			}
			r.claimState[ref.UID] = ce
		}
		ce.Pods[string(pod.UID)] = key
		for d, dp := range ce.Drivers {
			if !dp.Prepared {
				byDriver[d] = append(byDriver[d], claimRef{Namespace: ref.Namespace, UID: ref.UID, Name: ref.Name})
			}
		}
	}
	drivers := make([]string, 0, len(byDriver))
	for d := range byDriver {
		drivers = append(drivers, d)
	}
	sort.Strings(drivers)
	for _, d := range drivers {
		claims := byDriver[d]
		p, err := r.pluginFor(d)
		if err == nil {
			r.cnt.PrepareCalls++
			cctx, cancel := context.WithTimeout(ctx, draCallTimeout)
			var res map[string]prepareResult
			res, err = p.client.Prepare(cctx, claims)
			cancel()
			if err == nil {
				for _, c := range claims {
					dp := r.claimState[c.UID].Drivers[d]
					dp.Version, dp.Socket = p.Version, p.Socket
					cr, ok := res[c.UID]
					switch {
					case !ok:
						dp.Error = "driver returned no result for the claim"
					case cr.Err != "":
						dp.Error = cr.Err
					default:
						now := time.Now().UTC()
						dp.Prepared, dp.Error, dp.PreparedAt = true, "", &now
						dp.Devices = cr.Devices
						for i := range dp.Devices {
							dp.Devices[i].Driver = d
						}
						log.Printf("pod %s: claim %s/%s prepared by %s (%s): %d device(s)", key, c.Namespace, c.Name, d, p.Version, len(cr.Devices))
					}
					if dp.Error != "" {
						r.cnt.PrepareClaimErrors++
						errs = append(errs, fmt.Sprintf("prepare claim %s (driver %s): %s", c.Name, d, dp.Error))
					}
				}
				continue
			}
		}
		r.cnt.PrepareCallErrors++
		for _, c := range claims {
			r.claimState[c.UID].Drivers[d].Error = err.Error()
		}
		errs = append(errs, fmt.Sprintf("NodePrepareResources (driver %s): %v", d, err))
	}
	now := time.Now().UTC()
	for _, ref := range refs {
		ce := r.claimState[ref.UID]
		if ce == nil || ce.Prepared {
			continue
		}
		all := true
		for _, dp := range ce.Drivers {
			all = all && dp.Prepared
		}
		if all {
			ce.Prepared, ce.PreparedAt = true, &now
		}
	}
	e.Attempts++
	if len(errs) > 0 {
		e.State, e.Reason = podPreparing, strings.Join(errs, "; ")
		log.Printf("pod %s: prepare failed (will retry): %s", key, e.Reason)
		return
	}
	e.State, e.Reason, e.PreparedAt = podPrepared, "", &now
	log.Printf("pod %s: all %d claim(s) prepared", key, len(refs))
}

func (r *reconciler) setWaiting(e *podEntry, reason string) {
	if e.Reason != reason {
		log.Printf("pod %s/%s: waiting: %s", e.Namespace, e.Name, reason)
	}
	e.State, e.Reason = podWaiting, reason
}

// unprepareUnused calls NodeUnprepareResources for claims that no pod holds any more.
func (r *reconciler) unprepareUnused(ctx context.Context) {
	byDriver := map[string][]claimRef{}
	for _, ce := range r.claimState {
		if len(ce.Pods) > 0 {
			continue
		}
		if len(ce.Drivers) == 0 {
			r.finishUnprepare(ce, nil)
			continue
		}
		for d := range ce.Drivers {
			byDriver[d] = append(byDriver[d], claimRef{Namespace: ce.Namespace, UID: ce.UID, Name: ce.Name})
		}
	}
	drivers := make([]string, 0, len(byDriver))
	for d := range byDriver {
		drivers = append(drivers, d)
	}
	sort.Strings(drivers)
	versions := map[string]map[string]string{} // claim UID -> driver -> version
	for _, d := range drivers {
		claims := byDriver[d]
		p, err := r.pluginFor(d)
		var res map[string]string
		if err == nil {
			r.cnt.UnprepareCalls++
			cctx, cancel := context.WithTimeout(ctx, draCallTimeout)
			res, err = p.client.Unprepare(cctx, claims)
			cancel()
		}
		for _, c := range claims {
			ce := r.claimState[c.UID]
			msg := ""
			switch {
			case err != nil:
				msg = fmt.Sprintf("NodeUnprepareResources (driver %s): %v", d, err)
			case res[c.UID] != "":
				msg = fmt.Sprintf("unprepare (driver %s): %s", d, res[c.UID])
				r.cnt.UnprepareClaimErrors++
			default:
				if _, ok := res[c.UID]; !ok {
					msg = fmt.Sprintf("unprepare (driver %s): driver returned no result for the claim", d)
					r.cnt.UnprepareClaimErrors++
				}
			}
			if msg != "" {
				ce.Error = msg
				log.Printf("claim %s/%s: %s (will retry)", c.Namespace, c.Name, msg)
				continue
			}
			if versions[c.UID] == nil {
				versions[c.UID] = map[string]string{}
			}
			versions[c.UID][d] = p.Version
			delete(ce.Drivers, d)
			if len(ce.Drivers) == 0 {
				r.finishUnprepare(ce, versions[c.UID])
			}
		}
		if err != nil {
			r.cnt.UnprepareCallErrors++
		}
	}
}

func (r *reconciler) finishUnprepare(ce *claimEntry, versions map[string]string) {
	if versions == nil {
		versions = map[string]string{}
	}
	var pods []string
	for _, e := range r.podEntries {
		for _, c := range e.ClaimRefs {
			if c.UID == ce.UID {
				pods = append(pods, podKey(e.Namespace, e.Name))
			}
		}
	}
	sort.Strings(pods)
	r.unprepared = append(r.unprepared, unpreparedRecord{Namespace: ce.Namespace, Name: ce.Name, UID: ce.UID, Versions: versions, Pods: pods, At: time.Now().UTC()})
	if n := len(r.unprepared); n > 500 {
		r.unprepared = r.unprepared[n-500:]
	}
	delete(r.claimState, ce.UID)
	log.Printf("claim %s/%s (%s) unprepared", ce.Namespace, ce.Name, ce.UID)
}

// finalDelete removes a terminating pod once its resources are unprepared, as the kubelet does (grace period 0,
// UID precondition); without it the pod would stay Terminating forever on a node without a real kubelet.
func (r *reconciler) finalDelete(ctx context.Context, e *podEntry) {
	uid := types.UID(e.UID)
	zero := int64(0)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := r.client.CoreV1().Pods(e.Namespace).Delete(dctx, e.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.Printf("pod %s/%s: final delete: %v (will retry)", e.Namespace, e.Name, err)
		return
	}
	e.FinalDeleted = true
	r.cnt.FinalDeletes++
	log.Printf("pod %s/%s: deleted (grace period 0)", e.Namespace, e.Name)
}

func (r *reconciler) patchRunning(ctx context.Context, pod *corev1.Pod, e *podEntry) {
	now := metav1.Now()
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	st := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		StartTime: &now,
		Conditions: []corev1.PodCondition{cond("PodReadyToStartContainers"), cond(corev1.PodInitialized),
			cond(corev1.ContainersReady), cond(corev1.PodReady), cond(corev1.PodScheduled)},
	}
	started := true
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image, ContainerID: "liken-test://" + e.UID + "/" + c.Name, Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	data, err := json.Marshal(map[string]any{"status": st})
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = r.client.CoreV1().Pods(pod.Namespace).Patch(pctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
		cancel()
	}
	if err != nil {
		log.Printf("pod %s/%s: status patch: %v (will retry)", pod.Namespace, pod.Name, err)
		return
	}
	e.StatusPatched = true
	r.cnt.StatusPatches++
}

// Output form of a pod in the state file.
type podOut struct {
	*podEntry
	Claims []claimOut `json:"claims"`
}

type claimOut struct {
	podClaimRef
	Prepared bool              `json:"prepared"`
	Devices  []deviceResult    `json:"devices"`
	Versions map[string]string `json:"versions"` // driver -> DRA service that prepared it
}

func (r *reconciler) write() {
	pods := map[string]podOut{}
	for _, e := range r.podEntries {
		k := podKey(e.Namespace, e.Name)
		if old, ok := pods[k]; ok && old.created.After(e.created) {
			continue
		}
		po := podOut{podEntry: e, Claims: []claimOut{}}
		for _, ref := range e.ClaimRefs {
			co := claimOut{podClaimRef: ref, Devices: []deviceResult{}, Versions: map[string]string{}}
			if ce := r.claimState[ref.UID]; ce == nil || !ce.Prepared {
				// Not (or no longer) prepared: show what was prepared last, if anything.
				if last, ok := e.lastOut[ref.UID]; ok {
					co.Devices, co.Versions = last.Devices, last.Versions
				}
			} else {
				co.Prepared = ce.Prepared
				ds := make([]string, 0, len(ce.Drivers))
				for d := range ce.Drivers {
					ds = append(ds, d)
				}
				sort.Strings(ds)
				for _, d := range ds {
					dp := ce.Drivers[d]
					co.Devices = append(co.Devices, dp.Devices...)
					if dp.Version != "" {
						co.Versions[d] = dp.Version
					}
				}
				if e.lastOut == nil {
					e.lastOut = map[string]claimOut{}
				}
				e.lastOut[ref.UID] = co
			}
			po.Claims = append(po.Claims, co)
		}
		pods[k] = po
	}
	for _, ce := range r.claimState {
		for _, dp := range ce.Drivers {
			if dp.Devices == nil {
				dp.Devices = []deviceResult{}
			}
		}
	}
	pj, _ := json.Marshal(pods)
	cj, _ := json.Marshal(r.claimState)
	uj, _ := json.Marshal(r.unprepared)
	if r.unprepared == nil {
		uj = []byte("[]")
	}
	kj, _ := json.Marshal(r.cnt)
	r.rec.setModel(r.synced, pj, cj, uj, kj)
}
