//go:build liken_dra_gogo

package draapi

import (
	drav1 "k8s.io/kubelet/pkg/apis/dra/v1"
	drav1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
)

// NewV1Claim returns a v1 claim reference.
func NewV1Claim(namespace, uid, name string) *drav1.Claim {
	return &drav1.Claim{Namespace: namespace, UID: uid, Name: name}
}

// NewV1Beta1Claim returns a v1beta1 claim reference.
func NewV1Beta1Claim(namespace, uid, name string) *drav1beta1.Claim {
	return &drav1beta1.Claim{Namespace: namespace, UID: uid, Name: name}
}

// V1ClaimUID returns the claim's UID.
func V1ClaimUID(c *drav1.Claim) string { return c.GetUID() }

// V1Beta1ClaimUID returns the claim's UID.
func V1Beta1ClaimUID(c *drav1beta1.Claim) string { return c.GetUID() }

// NewV1Device returns a v1 prepared device.
func NewV1Device(requests []string, pool, device string, cdiIDs []string) *drav1.Device {
	return &drav1.Device{RequestNames: requests, PoolName: pool, DeviceName: device, CDIDeviceIDs: cdiIDs}
}

// NewV1Beta1Device returns a v1beta1 prepared device.
func NewV1Beta1Device(requests []string, pool, device string, cdiIDs []string) *drav1beta1.Device {
	return &drav1beta1.Device{RequestNames: requests, PoolName: pool, DeviceName: device, CDIDeviceIDs: cdiIDs}
}

// V1DeviceCDIIDs returns the device's CDI IDs.
func V1DeviceCDIIDs(d *drav1.Device) []string { return d.GetCDIDeviceIDs() }

// V1Beta1DeviceCDIIDs returns the device's CDI IDs.
func V1Beta1DeviceCDIIDs(d *drav1beta1.Device) []string { return d.GetCDIDeviceIDs() }

// V1DeviceShareID returns nil: this API has no share IDs.
func V1DeviceShareID(d *drav1.Device) *string { return nil }
