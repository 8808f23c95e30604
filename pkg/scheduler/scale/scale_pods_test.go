package scale

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wl "github.com/locus-project/locus/pkg/workload"
)

// podSpec is one pod of the workload: cpusetPercent of them (half by
// default) ask for CPUs of their own (cpuset-scheduler, 1-16 whole CPUs,
// request = limit), the others are plain pods with small requests,
// shuffled with a fixed seed so that both schedulers get the very same
// sequence.
type podSpec struct {
	name   string
	cpuset bool
	milli  int64 // CPU request (and, for cpuset pods, limit)
}

func workload(n, cpusetPercent int, seed int64) []podSpec {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5ca1e))
	specs := make([]podSpec, n)
	for i := range specs {
		s := podSpec{name: fmt.Sprintf("p-%05d", i), cpuset: i*100 < n*cpusetPercent}
		if s.cpuset {
			s.milli = int64(1+r.IntN(16)) * 1000
		} else {
			s.milli = int64(1+r.IntN(5)) * 100
		}
		specs[i] = s
	}
	r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
	return specs
}

// pod is the spec as a Pod in the protocol of the scheduler k: for
// locus-scheduler a cpuset pod carries the cpuset-scheduler annotation;
// for koord-scheduler it is an LSR pod of the koord-prod priority class,
// and every pod names koord-scheduler (its profile's name); for
// kube-scheduler none of these. The pod is otherwise the same.
func (s podSpec) pod(ns string, k kind) *corev1.Pod {
	cpu := *resource.NewMilliQuantity(s.milli, resource.DecimalSI)
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: cpu, corev1.ResourceMemory: resource.MustParse("256Mi")}}
	var ann map[string]string
	labels := map[string]string{"app": "scale"}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			// Deleted at once between passes.
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	if k == koord {
		p.Spec.SchedulerName = koordSchedulerName
	}
	if s.cpuset {
		res.Limits = corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: resource.MustParse("256Mi")}
		switch k {
		case locus:
			ann = map[string]string{wl.AnnotationCPUSet: "true"}
		case koord:
			labels[koordQoSLabel] = "LSR"
			p.Spec.PriorityClassName = koordProdClass
		}
	}
	p.Annotations = ann
	p.Spec.Containers = []corev1.Container{{Name: "app", Image: "app", Resources: res}}
	return p
}
