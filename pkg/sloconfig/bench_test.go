package sloconfig

import "testing"

// benchDoc is a resource-qos-config as clusters write it: two classes'
// memoryQOS, cpuQOS and memoryLocality, and three nodeStrategies entries.
const benchDoc = `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "lowLimitPercent": 50}, "cpuQOS": {"enable": true, "groupIdentity": 2}, "memoryLocality": {"policy": "bestEffort"}},
 "beClass": {"memoryQOS": {"enable": true, "throttlingPercent": 80}, "cpuQOS": {"enable": true, "groupIdentity": -1}}},
 "nodeStrategies": [{"name": "a", "nodeSelector": {"matchLabels": {"pool": "a"}}, "beClass": {"memoryQOS": {"throttlingPercent": 50}}},
  {"name": "b", "nodeSelector": {"matchLabels": {"pool": "b"}}, "lsClass": {"memoryLocality": {"policy": "none"}}},
  {"name": "c", "nodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x", "y"]}]}, "lsClass": {"memoryQOS": {"enable": false}}}]}`

// BenchmarkArrival is what one value of resource-qos-config costs: its one
// decode as it arrives, and this node's settings taken from it at the next
// load.
func BenchmarkArrival(b *testing.B) {
	for b.Loop() {
		r, err := ParseResourceQoS(benchDoc)
		if err != nil {
			b.Fatal(err)
		}
		if _, name := r.ForNode(map[string]string{"pool": "b"}); name != "b" {
			b.Fatalf("entry in force %q", name)
		}
	}
}
