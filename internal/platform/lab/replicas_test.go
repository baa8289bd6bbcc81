package lab

import (
	"reflect"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
)

func TestReplicaDeltas(t *testing.T) {
	t.Parallel()
	r := func(ns, pod string, n int64) infra.ReplicaRequests {
		return infra.ReplicaRequests{Namespace: ns, Service: "back", Pod: pod, Requests: n}
	}
	before := map[string]infra.ReplicaRequests{
		"ns-1/back-0": r("ns-1", "back-0", 10), "ns-1/back-1": r("ns-1", "back-1", 5),
		"ns-1/back-2": r("ns-1", "back-2", 7), // restarted: its count went back
		"ns-2/back-0": r("ns-2", "back-0", 1), // gone after
	}
	after := map[string]infra.ReplicaRequests{
		"ns-1/back-1": r("ns-1", "back-1", 25), "ns-1/back-0": r("ns-1", "back-0", 40),
		"ns-1/back-2": r("ns-1", "back-2", 3),
		"ns-1/back-3": r("ns-1", "back-3", 9), // new: no first reading
	}
	want := []infra.ReplicaRequests{r("ns-1", "back-0", 30), r("ns-1", "back-1", 20)}
	if got := replicaDeltas(before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("replicaDeltas = %+v, want %+v", got, want)
	}
}
