package cluster

import (
	"context"
	"strings"
	"testing"
)

// recordRunner records the commands it is given.
type recordRunner struct{ ran []Cmd }

func (r *recordRunner) Run(_ context.Context, c Cmd) ([]byte, error) {
	r.ran = append(r.ran, c)
	return nil, nil
}

// The lab's runner runs a command only in one of the lab's namespaces:
// the empty name, which the runner takes as the host's, is refused.
func TestRunRefusesOtherNamespaces(t *testing.T) {
	t.Parallel()
	rr := &recordRunner{}
	l := &Lab{cfg: Config{Name: "mbx", Prefix: "mbx", Runner: rr}}
	for _, ns := range []string{"", "other-n-app", "mbxn-app"} {
		if _, err := l.Run(context.Background(), Cmd{Netns: ns, Args: []string{"iptables-restore"}}); err == nil || !strings.Contains(err.Error(), "is not one of lab mbx's") {
			t.Errorf("netns %q: %v", ns, err)
		}
	}
	if _, err := l.Run(context.Background(), Cmd{Netns: NodeNetns("mbx", "app"), Args: []string{"iptables-save"}}); err != nil {
		t.Errorf("the lab's own node namespace: %v", err)
	}
	if len(rr.ran) != 1 || rr.ran[0].Netns != "mbx-n-app" {
		t.Errorf("ran %+v; want only the command in mbx-n-app", rr.ran)
	}
}
