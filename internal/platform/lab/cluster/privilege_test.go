package cluster

import (
	"slices"
	"strings"
	"testing"
)

func TestPrivilegeArgv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    ContainerSpec
		want    []string // the arguments after the shim's
		wantExe bool
		wantErr string
	}{
		{name: "root keeps no capability",
			spec: ContainerSpec{Name: "load", Command: []string{"true", "-x"}},
			want: []string{"setpriv", "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--", "true", "-x"}},
		{name: "an unprivileged user execs its program by descriptor",
			spec: ContainerSpec{Name: "app", Command: []string{"true", "-x"}, UID: 65532, GID: 65532},
			want: []string{"setpriv", "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all",
				"--reuid=65532", "--regid=65532", "--clear-groups", "--pdeathsig=KILL", "--", "/proc/self/fd/3", "-x"},
			wantExe: true},
		{name: "a proxy keeps its capabilities as ambient ones",
			spec: ContainerSpec{Name: "ztunnel", Command: []string{"true"}, UID: 1337, GID: 1337, Caps: []string{"net_admin", "net_raw"}},
			want: []string{"setpriv", "--no-new-privs", "--bounding-set=-all,+net_admin,+net_raw", "--inh-caps=-all,+net_admin,+net_raw",
				"--ambient-caps=-all,+net_admin,+net_raw", "--reuid=1337", "--regid=1337", "--clear-groups", "--pdeathsig=KILL", "--", "/proc/self/fd/3"},
			wantExe: true},
		{name: "all is refused", spec: ContainerSpec{Name: "x", Command: []string{"true"}, Caps: []string{"all"}}, wantErr: `capability "all"`},
		{name: "an option is refused", spec: ContainerSpec{Name: "x", Command: []string{"true"}, Caps: []string{"net_admin,+sys_admin"}}, wantErr: "capability"},
		{name: "cap_ prefix is refused", spec: ContainerSpec{Name: "x", Command: []string{"true"}, Caps: []string{"cap_net_admin"}}, wantErr: "capability"},
		{name: "no command", spec: ContainerSpec{Name: "x"}, wantErr: "no command"},
		{name: "a missing program of a user", spec: ContainerSpec{Name: "x", Command: []string{"/nonexistent/prog"}, UID: 5}, wantErr: "/nonexistent/prog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			argv, exe, err := tt.spec.privilegeArgv()
			if exe != nil {
				defer exe.Close()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			shim := []string{"/bin/sh", "-c", shimScript, "meshbench-shim"}
			if !slices.Equal(argv[:len(shim)], shim) || !slices.Equal(argv[len(shim):], tt.want) {
				t.Errorf("argv = %q\nwant shim + %q", argv, tt.want)
			}
			if (exe != nil) != tt.wantExe {
				t.Errorf("exe = %v, want one: %v", exe, tt.wantExe)
			}
		})
	}
}
