package parse

import (
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestProcLimit(t *testing.T) {
	tests := []struct {
		name, text string
		want       facts.Limit
		ok, err    bool
	}{
		{"captured jvm", readTestdata(t, "proc/limits-jvm-this-machine.txt"), facts.Limit{Soft: 20000, Hard: 20000}, true, false},
		{"captured self", readTestdata(t, "proc/limits-self-this-machine.txt"), facts.Limit{Soft: 20000, Hard: 20000}, true, false},
		{"unlimited hard", "Max open files            1024                 unlimited            files     \n", facts.Limit{Soft: 1024, Hard: facts.Unlimited}, true, false},
		{"absent", "Max processes             1024                 1024                 processes \n", facts.Limit{}, false, false},
		{"garbage", "Max open files            lots                 1024                 files     \n", facts.Limit{}, false, true},
		{"negative", "Max open files            -5                   1024                 files     \n", facts.Limit{}, false, true},
		{"short", "Max open files            1024\n", facts.Limit{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ProcLimit(tt.text, "Max open files")
			if (err != nil) != tt.err || ok != tt.ok || got != tt.want {
				t.Errorf("ProcLimit = %+v, %v, %v; want %+v, %v, error %v", got, ok, err, tt.want, tt.ok, tt.err)
			}
		})
	}
}

func TestKBField(t *testing.T) {
	tests := []struct {
		name, text, key string
		want            int64
		ok, err         bool
	}{
		{"captured status VmSwap", readTestdata(t, "proc/status-jvm17-this-machine.txt"), "VmSwap", 0, true, false},
		{"captured status VmRSS is not VmSwap", "VmRSS:\t   51200 kB\n", "VmSwap", 0, false, false},
		{"captured meminfo", readTestdata(t, "proc/meminfo-this-machine.txt"), "MemTotal", 24683548, true, false},
		{"swapping", "VmSwap:\t  204800 kB\n", "VmSwap", 204800, true, false},
		{"no unit", "VmSwap:\t  204800\n", "VmSwap", 0, false, true},
		{"not a number", "MemTotal: x kB\n", "MemTotal", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := KBField(tt.text, tt.key)
			if (err != nil) != tt.err || ok != tt.ok || got != tt.want {
				t.Errorf("KBField = %d, %v, %v; want %d, %v, error %v", got, ok, err, tt.want, tt.ok, tt.err)
			}
		})
	}
}

func TestJavaVersion(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"captured openjdk 17", readTestdata(t, "proc/release-openjdk-17-debian.txt"), "17.0.15"},
		{"captured temurin 25", readTestdata(t, "proc/release-temurin-25.txt"), "25.0.3"},
		{"java 8", `JAVA_VERSION="1.8.0_392"`, "1.8.0_392"},
		{"shell in the value", `JAVA_VERSION="17$(reboot)"`, ""},
		{"empty", `JAVA_VERSION=""`, ""},
		{"absent", `IMPLEMENTOR="Debian"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := JavaVersion(tt.text)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("JavaVersion = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestHeapFlag(t *testing.T) {
	tests := []struct {
		arg, flag string
		want      int64
	}{
		{"-Xmx6g", "Xmx", 6 << 30},
		{"-Xms64m", "Xms", 64 << 20},
		{"-Xmx1G", "Xmx", 1 << 30},
		{"-Xmx524288k", "Xmx", 512 << 20},
		{"-Xmx1073741824", "Xmx", 1 << 30},
		{"-Xms64m", "Xmx", 0},
		{"-Xmx", "Xmx", 0},
		{"-Xmx6x", "Xmx", 0},
		{"-Xmx0g", "Xmx", 0},
		{"-Xmx99999999999t", "Xmx", 0},
	}
	for _, tt := range tests {
		got, ok := HeapFlag(tt.arg, tt.flag)
		if got != tt.want || ok != (tt.want != 0) {
			t.Errorf("HeapFlag(%q, %q) = %d, %v; want %d", tt.arg, tt.flag, got, ok, tt.want)
		}
	}
}
