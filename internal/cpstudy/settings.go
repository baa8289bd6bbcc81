package cpstudy

import (
	"github.com/meshbench/meshbench/internal/localkube"
)

// Settings are istiod's push tuning, set explicitly and recorded with the
// results. The push throttle is what Istio chooses itself for one CPU
// (15+5*GOMAXPROCS); the request limit is raised from its one-CPU default
// of 20 new streams a second, which would otherwise make reconnecting
// 5,000 proxies take four minutes by design and hide what pushing costs.
type Settings struct {
	DebounceAfter   string `json:"PILOT_DEBOUNCE_AFTER"`
	DebounceMax     string `json:"PILOT_DEBOUNCE_MAX"`
	EDSDebounce     string `json:"PILOT_ENABLE_EDS_DEBOUNCE"`
	PushThrottle    string `json:"PILOT_PUSH_THROTTLE"`
	RequestsPerSec  string `json:"PILOT_MAX_REQUESTS_PER_SECOND"`
	GOMAXPROCS      string `json:"GOMAXPROCS"`
	Ambient         string `json:"PILOT_ENABLE_AMBIENT"`
	GatewayDeploy   string `json:"PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER"`
	GatewayStatus   string `json:"PILOT_ENABLE_GATEWAY_API_STATUS"`
	IstiodCPUs      string `json:"istiod_cpus"`
	OtherCPUs       string `json:"other_cpus"`
	ClientsPerConn  int    `json:"client_streams_per_connection"`
	ChangeInterval  string `json:"change_interval"`
	ChangeTimeout   string `json:"change_timeout"`
	SampleInterval  string `json:"sample_interval"`
	IstiodVersion   string `json:"istiod_version"`
	KubernetesBuild string `json:"kubernetes_version"`
}

func defaultSettings() Settings {
	return Settings{DebounceAfter: "100ms", DebounceMax: "10s", EDSDebounce: "true", PushThrottle: "20",
		RequestsPerSec: "1000", GOMAXPROCS: "1", KubernetesBuild: localkube.K8sVersion,
		// The study plays the waypoints' Deployments and writes their
		// Gateways' status itself: nothing here would run a Deployment.
		GatewayDeploy: "false", GatewayStatus: "false"}
}

// env is istiod's environment for these settings.
func (s Settings) env() []string {
	return []string{
		"PILOT_DEBOUNCE_AFTER=" + s.DebounceAfter, "PILOT_DEBOUNCE_MAX=" + s.DebounceMax,
		"PILOT_ENABLE_EDS_DEBOUNCE=" + s.EDSDebounce, "PILOT_PUSH_THROTTLE=" + s.PushThrottle,
		"PILOT_MAX_REQUESTS_PER_SECOND=" + s.RequestsPerSec, "GOMAXPROCS=" + s.GOMAXPROCS,
		"PILOT_ENABLE_AMBIENT=" + s.Ambient, "PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER=" + s.GatewayDeploy,
		"PILOT_ENABLE_GATEWAY_API_STATUS=" + s.GatewayStatus,
	}
}
