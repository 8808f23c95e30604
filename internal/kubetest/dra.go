package kubetest

import (
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SliceDevice is one device of a ResourceSlice made by CreateResourceSlice,
// with its attributes: an int64 is an int attribute, a string a string one.
type SliceDevice struct {
	Name       string
	Attributes map[string]any
}

// CreateResourceSlice publishes devices of driver in a pool named after
// the slice, on node, as a DRA driver's kubelet plugin does; the slice is
// deleted at the end of the test.
func (cp *ControlPlane) CreateResourceSlice(t testing.TB, name, driver, node string, devices ...SliceDevice) *resourceapi.ResourceSlice {
	t.Helper()
	s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.ResourceSliceSpec{
		Driver: driver, NodeName: node, Pool: resourceapi.ResourcePool{Name: name, ResourceSliceCount: 1}}}
	for _, d := range devices {
		attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}
		for k, v := range d.Attributes {
			switch v := v.(type) {
			case int64:
				attrs[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{IntValue: &v}
			case string:
				attrs[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{StringValue: &v}
			default:
				t.Fatalf("kubetest: attribute %s of device %s: %T is neither int64 nor string", k, d.Name, v)
			}
		}
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d.Name, Basic: &resourceapi.BasicDevice{Attributes: attrs}})
	}
	slices := cp.Client.ResourceV1beta1().ResourceSlices()
	created, err := slices.Create(callContext(t), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create ResourceSlice %s: %v", name, err)
	}
	t.Cleanup(func() { _ = slices.Delete(callContext(t), name, metav1.DeleteOptions{}) })
	return created
}

// CreateAllocatedClaim creates a ResourceClaim in namespace asking for one
// device of driver's class and allocates it the device pool/device, as
// the scheduler's DynamicResources plugin does in its Reserve.
func (cp *ControlPlane) CreateAllocatedClaim(t testing.TB, namespace, name, driver, pool, device string) *resourceapi.ResourceClaim {
	t.Helper()
	ctx := callContext(t)
	claims := cp.Client.ResourceV1beta1().ResourceClaims(namespace)
	c, err := claims.Create(ctx, &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "dev", DeviceClassName: driver}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create ResourceClaim %s/%s: %v", namespace, name, err)
	}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
		Results: []resourceapi.DeviceRequestAllocationResult{{Request: "dev", Driver: driver, Pool: pool, Device: device}}}}
	c, err = claims.UpdateStatus(ctx, c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("kubetest: allocate ResourceClaim %s/%s: %v", namespace, name, err)
	}
	return c
}

// CreateDeviceClass creates a DeviceClass selecting every device of
// driver, as a DRA driver's chart installs one; it is deleted at the end
// of the test.
func (cp *ControlPlane) CreateDeviceClass(t testing.TB, name, driver string) {
	t.Helper()
	classes := cp.Client.ResourceV1beta1().DeviceClasses()
	_, err := classes.Create(callContext(t), &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{
			{CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create DeviceClass %s: %v", name, err)
	}
	t.Cleanup(func() { _ = classes.Delete(callContext(t), name, metav1.DeleteOptions{}) })
}

// CreatePendingClaim creates a ResourceClaim in namespace asking for one
// device of class, left unallocated: the scheduler's DynamicResources
// plugin allocates it in the cycle that schedules its pod.
func (cp *ControlPlane) CreatePendingClaim(t testing.TB, namespace, name, class string) {
	t.Helper()
	_, err := cp.Client.ResourceV1beta1().ResourceClaims(namespace).Create(callContext(t), &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "dev", DeviceClassName: class}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create ResourceClaim %s/%s: %v", namespace, name, err)
	}
}
