package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// AppArmor gets in the way only when it confines meshbench, or a profile
// names a program the lab runs and is not in complain mode.
func TestAppArmorFinding(t *testing.T) {
	t.Parallel()
	ipt, err := exec.LookPath("iptables-restore")
	if err != nil {
		ipt = "/usr/sbin/iptables-restore"
	}
	real, err := filepath.EvalSymlinks(ipt)
	if err != nil {
		real = ipt
	}
	tests := []struct {
		name, enabled, self, profiles string
		ok                            bool
		want                          string
	}{
		{name: "disabled", enabled: "N", ok: true, want: "AppArmor is not enabled"},
		{name: "enabled, nothing of the lab's", enabled: "Y", self: "unconfined\n",
			profiles: "/usr/bin/man (enforce)\nlsb_release (enforce)\nnvidia_modprobe (enforce)\n", ok: true,
			want: "AppArmor is enabled (3 profiles loaded), meshbench runs unconfined, and no profile names a program the lab runs"},
		{name: "meshbench confined", enabled: "Y", self: "meshbench (enforce)\n", profiles: "meshbench (enforce)\n",
			want: `meshbench runs confined by AppArmor as "meshbench (enforce)"`},
		{name: "a profile for iptables in enforce mode", enabled: "Y", self: "unconfined",
			profiles: real + " (enforce)\n", want: "AppArmor confines programs the lab runs: " + real + " (enforce)"},
		{name: "the same in complain mode", enabled: "Y", self: "unconfined",
			profiles: real + " (complain)\n", ok: true, want: "1 profiles loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			h := host{apparmorEnabled: filepath.Join(dir, "enabled"), selfLabel: filepath.Join(dir, "current"),
				apparmorProfiles: filepath.Join(dir, "profiles")}
			for path, s := range map[string]string{h.apparmorEnabled: tt.enabled + "\n", h.selfLabel: tt.self, h.apparmorProfiles: tt.profiles} {
				if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := h.apparmorFinding(nil)
			if f.OK != tt.ok || !strings.Contains(f.Detail, tt.want) {
				t.Errorf("finding %+v; want ok %v saying %q", f, tt.ok, tt.want)
			}
			if !f.OK && f.Fix == "" {
				t.Error("no fix")
			}
		})
	}
}
