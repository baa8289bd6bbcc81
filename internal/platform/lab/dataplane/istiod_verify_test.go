package dataplane

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/xdsrelay"
)

func TestRejectedUpdates(t *testing.T) {
	ok := "cluster_manager.cds.update_rejected: 0\nlistener_manager.lds.update_rejected: 0\nhttp.inbound_0.0.0.0_8080.rds.inbound|8080||.update_rejected: 0\n"
	if err := rejectedUpdates(ok); err != nil {
		t.Errorf("all zero: %v", err)
	}
	bad := ok + "cluster.outbound|8080||a.ns-1.svc.cluster.local.eds.update_rejected: 2\n"
	if err := rejectedUpdates(bad); err == nil || !strings.Contains(err.Error(), "eds.update_rejected=2") {
		t.Errorf("one rejected: %v", err)
	}
	if err := rejectedUpdates("server.live: 1\n"); err == nil {
		t.Error("no counters at all: no error")
	}
}

func TestChangeSummary(t *testing.T) {
	cs := []xdsrelay.Change{
		{Resource: "virtualInbound", Extension: "istio.stats", Type: "type.googleapis.com/stats.PluginConfig", Action: xdsrelay.Optional},
		{Resource: "virtualOutbound", Extension: "istio.stats", Type: "type.googleapis.com/stats.PluginConfig", Action: xdsrelay.Optional},
		{Resource: "virtualInbound", Extension: "istio.metadata_exchange", Type: "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange", Action: xdsrelay.Removed},
	}
	want := "istio.metadata_exchange (envoy.tcp.metadataexchange.config.MetadataExchange) removed in 1 resources; istio.stats (stats.PluginConfig) marked optional in 2 resources"
	if got := changeSummary(cs); got != want {
		t.Errorf("summary:\n%s\nwant\n%s", got, want)
	}
	if got := changeSummary(nil); got != "none" {
		t.Errorf("no changes: %q", got)
	}
}
