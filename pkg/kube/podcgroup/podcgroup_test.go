package podcgroup

import (
	"strings"
	"testing"
)

const (
	uid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	hex = "4f1c2a9b0d3e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
)

func TestPodCgroup(t *testing.T) {
	tests := []struct {
		driver  Driver
		qos     string
		uid     string
		want    string
		wantErr string
	}{
		{Cgroupfs, Guaranteed, uid, "kubepods/pod" + uid, ""},
		{Cgroupfs, Burstable, uid, "kubepods/burstable/pod" + uid, ""},
		{Cgroupfs, BestEffort, uid, "kubepods/besteffort/pod" + uid, ""},
		{Systemd, Guaranteed, uid, "kubepods.slice/kubepods-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice", ""},
		{Systemd, Burstable, uid, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice", ""},
		{Systemd, BestEffort, uid, "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice", ""},
		{Cgroupfs, Burstable, "../../etc", "", "metadata.uid"},
		{Cgroupfs, Burstable, strings.ToUpper(uid), "", "lower-case UUID"},
		{Cgroupfs, Burstable, uid + "/x", "", "metadata.uid"},
		{Cgroupfs, Burstable, "", "", "metadata.uid"},
		{Cgroupfs, "burstable", uid, "", "QoS class"},
		{"", Burstable, uid, "", "cgroup driver"},
	}
	for _, tt := range tests {
		t.Run(string(tt.driver)+"/"+tt.qos+"/"+tt.uid, func(t *testing.T) {
			got, err := PodCgroup(tt.driver, tt.qos, tt.uid)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestParseContainerID(t *testing.T) {
	tests := []struct {
		in      string
		want    ContainerID
		wantErr string
	}{
		{"containerd://" + hex, ContainerID{Containerd, hex}, ""},
		{"cri-o://" + hex, ContainerID{CRIO, hex}, ""},
		{"docker://" + hex, ContainerID{Docker, hex}, ""},
		{hex, ContainerID{}, "not <runtime>://<id>"},
		{"rkt://" + hex, ContainerID{}, `runtime "rkt"`},
		{"containerd://" + hex[:63], ContainerID{}, "64 lower-case hexadecimal"},
		{"containerd://" + strings.ToUpper(hex), ContainerID{}, "64 lower-case hexadecimal"},
		{"containerd://../" + hex[3:], ContainerID{}, "64 lower-case hexadecimal"},
		{"containerd://" + hex + "/..", ContainerID{}, "64 lower-case hexadecimal"},
		{"", ContainerID{}, "not <runtime>://<id>"},
	}
	for _, tt := range tests {
		got, err := ParseContainerID(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestContainerCandidates(t *testing.T) {
	pod := "kubepods/burstable/pod" + uid
	spod := "kubepods.slice/kubepods-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice"
	tests := []struct {
		driver  Driver
		pod     string
		id      ContainerID
		want    []string
		wantErr string
	}{
		{Cgroupfs, pod, ContainerID{Containerd, hex}, []string{pod + "/" + hex}, ""},
		{Cgroupfs, pod, ContainerID{Docker, hex}, []string{pod + "/" + hex}, ""},
		{Cgroupfs, pod, ContainerID{CRIO, hex}, []string{pod + "/crio-" + hex, pod + "/" + hex}, ""},
		{Systemd, spod, ContainerID{Containerd, hex}, []string{spod + "/cri-containerd-" + hex + ".scope"}, ""},
		{Systemd, spod, ContainerID{CRIO, hex}, []string{spod + "/crio-" + hex + ".scope"}, ""},
		{Systemd, spod, ContainerID{Docker, hex}, []string{spod + "/docker-" + hex + ".scope"}, ""},
		{Systemd, spod, ContainerID{"rkt", hex}, nil, "runtime"},
		{Systemd, spod, ContainerID{Containerd, "../x"}, nil, "hexadecimal"},
		{"upstart", spod, ContainerID{Containerd, hex}, nil, "cgroup driver"},
	}
	for _, tt := range tests {
		got, err := ContainerCandidates(tt.driver, tt.pod, tt.id)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s %+v: error = %v, want one containing %q", tt.driver, tt.id, err, tt.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s %+v: = %v, %v; want %v", tt.driver, tt.id, got, err, tt.want)
		}
	}
}

func TestDetectDriver(t *testing.T) {
	tests := []struct {
		present []string
		want    Driver
		ok      bool
	}{
		{[]string{"kubepods.slice", "system.slice"}, Systemd, true},
		{[]string{"kubepods", "user.slice"}, Cgroupfs, true},
		{[]string{"system.slice"}, "", false},
		{[]string{"kubepods", "kubepods.slice"}, "", false},
	}
	for _, tt := range tests {
		set := map[string]bool{}
		for _, p := range tt.present {
			set[p] = true
		}
		got, ok := DetectDriver(func(rel string) bool { return set[rel] })
		if got != tt.want || ok != tt.ok {
			t.Errorf("%v: = %q, %v; want %q, %v", tt.present, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseDriver(t *testing.T) {
	for in, want := range map[string]Driver{"": "", "auto": "", "systemd": Systemd, "CgroupFS": Cgroupfs} {
		if got, err := ParseDriver(in); err != nil || got != want {
			t.Errorf("%q: = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseDriver("upstart"); err == nil || !strings.Contains(err.Error(), "upstart") {
		t.Errorf("upstart: error = %v", err)
	}
}

// Every directory name ContainerCandidates gives reads back as the
// container's ID; names of other directories do not.
func TestContainerDir(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for _, d := range []Driver{Cgroupfs, Systemd} {
		for _, rt := range []Runtime{Containerd, CRIO, Docker} {
			cands, err := ContainerCandidates(d, "pod", ContainerID{Runtime: rt, ID: id})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cands {
				if got, ok := ContainerDir(d, strings.TrimPrefix(c, "pod/")); !ok || got != id {
					t.Errorf("%s %s: %s read as %q, %v", d, rt, c, got, ok)
				}
			}
		}
	}
	for _, bad := range []struct {
		d    Driver
		name string
	}{
		{Cgroupfs, id[:63]}, {Cgroupfs, strings.ToUpper(id)}, {Cgroupfs, "crio-conmon-" + id}, {Cgroupfs, "cri-containerd-" + id + ".scope"},
		{Systemd, id}, {Systemd, "crio-conmon-" + id + ".scope"}, {Systemd, "cri-containerd-" + id}, {Systemd, "cri-containerd-../" + id + ".scope"},
		{"other", id},
	} {
		if got, ok := ContainerDir(bad.d, bad.name); ok {
			t.Errorf("%s %q read as container %q", bad.d, bad.name, got)
		}
	}
	if len(QoSParents(Cgroupfs)) != 3 || len(QoSParents(Systemd)) != 3 || QoSParents("other") != nil {
		t.Errorf("QoS parents %v %v", QoSParents(Cgroupfs), QoSParents(Systemd))
	}
}
