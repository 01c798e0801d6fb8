package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func proc(edit func(p *facts.BrokerProcess)) func(f *facts.Facts) {
	return func(f *facts.Facts) { edit(f.Kafka.Process) }
}

func fixWants(check func(t *testing.T, fx *Fix)) func(t *testing.T, fd Finding) {
	return func(t *testing.T, fd Finding) {
		t.Helper()
		if fd.Fix == nil {
			t.Fatal("no fix")
		}
		check(t, fd.Fix)
	}
}

// Every process rule: no broker skips, a broker whose process was not
// gathered is unknown with the section's reason.
func TestProcessRulesWithoutProcess(t *testing.T) {
	for _, id := range []string{RuleBrokerOpenFiles, RuleBrokerMapCount, RuleBrokerSwap, RuleJVMVersion, RuleJVMHeap} {
		runRuleCases(t, id, []ruleCase{
			{name: "no broker", mutate: func(f *facts.Facts) { f.Kafka = nil }, status: Skip, reason: "no Kafka broker"},
			{name: "not gathered", mutate: func(f *facts.Facts) {
				f.Kafka.Process = nil
				f.Sections = map[string]facts.SectionStatus{facts.SecProcess: {State: "absent"}}
			}, status: Unknown, reason: "broker process (pid 1234) not gathered (absent)"},
		})
	}
}

func TestBrokerOpenFiles(t *testing.T) {
	runRuleCases(t, RuleBrokerOpenFiles, []ruleCase{
		{name: "compliant", status: Pass, reason: "soft limit 100000, 1800 descriptors in use"},
		{name: "unlimited", mutate: proc(func(p *facts.BrokerProcess) { p.NoFile = &facts.Limit{Soft: facts.Unlimited, Hard: facts.Unlimited} }), status: Pass, reason: "soft limit unlimited"},
		{name: "soft 1024 under a high hard limit", mutate: proc(func(p *facts.BrokerProcess) { p.NoFile = &facts.Limit{Soft: 1024, Hard: 524288}; p.FDs = 300 }),
			status: Fail, reason: "soft open-files limit of 1024, below 100000", check: fixWants(func(t *testing.T, fx *Fix) {
				if fx.NoFile != 100000 || !fx.Restart {
					t.Errorf("fix %+v: want NoFile 100000 and a restart", fx)
				}
			})},
		{name: "high limit but 90% used", mutate: proc(func(p *facts.BrokerProcess) { p.NoFile = &facts.Limit{Soft: 200000, Hard: 200000}; p.FDs = 180000 }),
			status: Fail, reason: "180000 of 200000 descriptors in use", check: fixWants(func(t *testing.T, fx *Fix) {
				if fx.NoFile != 360000 {
					t.Errorf("fix NoFile %d, want twice the descriptors in use (360000)", fx.NoFile)
				}
			})},
		{name: "exactly 80% is not over", mutate: proc(func(p *facts.BrokerProcess) { p.FDs = 80000 }), status: Pass},
		{name: "profile raised", profile: func(p *Profile) { p.NoFile = 200000 }, status: Fail, reason: "below 200000"},
		{name: "fds unreadable", mutate: proc(func(p *facts.BrokerProcess) {
			p.FDs = -1
			p.Unread = map[string]string{"fds": "denied /proc/1234/fd"}
		}), status: Unknown, reason: "headroom is not known: descriptors in use (/proc/PID/fd) not readable: denied /proc/1234/fd (run with become"},
		{name: "fds unreadable, low limit still fails", mutate: proc(func(p *facts.BrokerProcess) { p.FDs = -1; p.NoFile.Soft = 4096 }), status: Fail, reason: "4096"},
		{name: "limits unreadable", mutate: proc(func(p *facts.BrokerProcess) {
			p.NoFile = nil
			p.Unread = map[string]string{"limits": "denied /proc/1234/limits"}
		}), status: Unknown, reason: "open-files limit (/proc/PID/limits) not readable: denied"},
	})
}

func TestBrokerMapCount(t *testing.T) {
	segs := func(n ...int) func(f *facts.Facts) {
		return func(f *facts.Facts) {
			f.Kafka.LogDirs = nil
			for i, s := range n {
				f.Kafka.LogDirs = append(f.Kafka.LogDirs, facts.LogDir{Path: "/data/" + string(rune('a'+i)), Exists: true, Segments: s})
			}
		}
	}
	both := func(fs ...func(f *facts.Facts)) func(f *facts.Facts) {
		return func(f *facts.Facts) {
			for _, m := range fs {
				m(f)
			}
		}
	}
	noDirs := func(f *facts.Facts) { f.Kafka.LogDirs = nil }
	runRuleCases(t, RuleBrokerMapCount, []ruleCase{
		{name: "compliant, no log dirs gathered", mutate: noDirs, status: Pass, reason: "judged on 4200 maps in use alone: log directories not gathered"},
		{name: "segments counted", mutate: segs(1000, 500), status: Pass, reason: "262144 leaves room for the broker's 4200 maps", check: func(t *testing.T, fd Finding) {
			if fd.Observed != "vm.max_map_count = 262144; 4200 maps in use, 1500 segments × 2 index maps = 3000" {
				t.Errorf("observed %q", fd.Observed)
			}
		}},
		{name: "segments dominate", mutate: segs(60000, 60000), status: Fail, reason: "needs about 240000 memory maps of the 262144", check: fixWants(func(t *testing.T, fx *Fix) {
			if fx.Sysctl[KeyMaxMapCount] != "480000" || fx.Bounds[KeyMaxMapCount].Dir != AtLeast {
				t.Errorf("fix %+v: want vm.max_map_count at least 480000", fx)
			}
		})},
		{name: "kernel default, maps fit", mutate: func(f *facts.Facts) { f.Sysctl[KeyMaxMapCount] = "65530" }, status: Warn, reason: "below 262144", check: fixWants(func(t *testing.T, fx *Fix) {
			if fx.Sysctl[KeyMaxMapCount] != "262144" || fx.WhenWarn {
				t.Errorf("fix %+v: want 262144, not planned on a warning", fx)
			}
		})},
		{name: "kernel default, maps near it", mutate: both(func(f *facts.Facts) { f.Sysctl[KeyMaxMapCount] = "65530" }, proc(func(p *facts.BrokerProcess) { p.Maps = 60000 })),
			status: Fail, reason: "60000 memory maps of the 65530"},
		{name: "maps unreadable, segments known", mutate: both(segs(10), proc(func(p *facts.BrokerProcess) {
			p.Maps = -1
			p.Unread = map[string]string{"maps": "denied /proc/1234/maps"}
		})), status: Pass, reason: "judged on 10 segments × 2 index maps = 20 alone: maps in use (/proc/PID/maps) not readable: denied"},
		{name: "neither known", mutate: both(noDirs, proc(func(p *facts.BrokerProcess) { p.Maps = -1 })), status: Unknown, reason: "neither the broker's maps nor its segments"},
		{name: "a directory's segments not counted", mutate: both(segs(10, -1), proc(func(p *facts.BrokerProcess) { p.Maps = -1 })), status: Unknown, reason: "segments of /data/b not counted"},
		{name: "sysctl unreadable", mutate: func(f *facts.Facts) { delete(f.Sysctl, KeyMaxMapCount) }, status: Unknown, reason: "vm.max_map_count not readable"},
	})
}

func TestBrokerSwap(t *testing.T) {
	runRuleCases(t, RuleBrokerSwap, []ruleCase{
		{name: "compliant", status: Pass, reason: "none of the broker's memory"},
		{name: "swapping", mutate: proc(func(p *facts.BrokerProcess) { p.SwapKB = 204800 }), status: Fail, reason: "204800 kB of the broker's memory is in swap"},
		{name: "status unreadable", mutate: proc(func(p *facts.BrokerProcess) {
			p.SwapKB = -1
			p.Unread = map[string]string{"status": "denied /proc/1234/status"}
		}), status: Unknown, reason: "VmSwap (/proc/PID/status) not readable: denied"},
	})
}

func TestJVMVersion(t *testing.T) {
	java := func(v string) func(p *facts.BrokerProcess) { return func(p *facts.BrokerProcess) { p.JavaVersion = v } }
	kafka := func(dist, v string, java string) func(f *facts.Facts) {
		return func(f *facts.Facts) {
			f.Kafka.Distribution, f.Kafka.Version, f.Kafka.Process.JavaVersion = dist, v, java
		}
	}
	runRuleCases(t, RuleJVMVersion, []ruleCase{
		{name: "17 on 3.6", status: Pass, reason: "Java 17 is supported (Kafka 3.x"},
		{name: "8 on 2.8", mutate: kafka("apache", "2.8.1", "1.8.0_392"), status: Pass, reason: "Java 8 is supported (Kafka 2.x"},
		{name: "17 on 2.8", mutate: kafka("apache", "2.8.1", "17.0.9"), status: Warn, reason: "newer than the Java releases this Kafka lists"},
		{name: "8 on 3.6 deprecated", mutate: proc(java("1.8.0_392")), status: Warn, reason: "Java 8 is deprecated"},
		{name: "11 on 3.6 supported", mutate: proc(java("11.0.21")), status: Pass},
		{name: "11 on 3.7 deprecated", mutate: kafka("apache", "3.7.0", "11.0.21"), status: Warn, reason: "Java 11 is deprecated"},
		{name: "21 on 3.9", mutate: kafka("apache", "3.9.0", "21.0.1"), status: Pass},
		{name: "11 on 4.0 fails", mutate: kafka("apache", "4.0.0", "11.0.21"), status: Fail, reason: "Java 11 is not supported", check: fixWants(func(t *testing.T, fx *Fix) {
			if !fx.Restart || fx.Manual == "" {
				t.Errorf("fix %+v: want a manual JDK change with a restart", fx)
			}
		})},
		{name: "7 fails", mutate: proc(java("1.7.0_80")), status: Fail, reason: "Java 7 is not supported"},
		{name: "25 on 4.0 best effort", mutate: kafka("apache", "4.0.0", "25.0.3"), status: Warn, reason: "best effort"},
		{name: "confluent 7.1 is AK 3.1", mutate: kafka("confluent", "7.1.0", "11.0.21"), status: Pass, reason: "Kafka 3.x ops.html"},
		{name: "kafka version unknown", mutate: func(f *facts.Facts) { f.Kafka.Version = "" }, status: Unknown, reason: "depends on its Kafka version"},
		{name: "release unreadable", mutate: proc(func(p *facts.BrokerProcess) {
			p.JavaVersion = ""
			p.Unread = map[string]string{"release": "absent /usr/lib/jvm/x/release"}
		}), status: Unknown, reason: "not readable: absent /usr/lib/jvm/x/release", check: func(t *testing.T, fd Finding) {
			if strings.Contains(fd.Reason, "become") {
				t.Errorf("an absent file is no permission problem: %q", fd.Reason)
			}
		}},
		{name: "exe unreadable", mutate: proc(func(p *facts.BrokerProcess) {
			p.JavaVersion, p.Exe = "", ""
			p.Unread = map[string]string{"exe": "denied /proc/1234/exe"}
		}), status: Unknown, reason: "java binary (/proc/PID/exe) not readable: denied"},
	})
}

func TestJVMHeap(t *testing.T) {
	heap := func(xms, xmx int64, memKB int64) func(f *facts.Facts) {
		return proc(func(p *facts.BrokerProcess) { p.Xms, p.Xmx, p.MemTotalKB = xms, xmx, memKB })
	}
	manual := func(want string) func(t *testing.T, fd Finding) {
		return fixWants(func(t *testing.T, fx *Fix) {
			if !fx.Restart || !strings.Contains(fx.Manual, want) {
				t.Errorf("fix %+v: want a restart and %q", fx, want)
			}
		})
	}
	runRuleCases(t, RuleJVMHeap, []ruleCase{
		{name: "compliant", status: Pass, reason: "-Xms = -Xmx = 6g"},
		{name: "over half of memory", mutate: heap(12<<30, 12<<30, 16<<20), status: Fail, reason: "-Xmx12g is more than half of MemTotal (16g)", check: manual(`KAFKA_HEAP_OPTS="-Xms6g -Xmx6g"`)},
		{name: "small host gets half", mutate: heap(6<<30, 6<<30, 8<<20), status: Fail, reason: "more than half", check: manual(`"-Xms4g -Xmx4g"`)},
		{name: "xms below xmx", mutate: heap(1<<30, 6<<30, 32<<20), status: Warn, reason: "-Xms differs from -Xmx"},
		{name: "big heap", mutate: heap(16<<30, 16<<30, 64<<20), status: Warn, reason: "-Xmx16g is above the 6g"},
		{name: "no -Xmx", mutate: heap(0, 0, 32<<20), status: Warn, reason: "no -Xmx"},
		{name: "memtotal unreadable", mutate: heap(6<<30, 6<<30, -1), status: Unknown, reason: "MemTotal (/proc/meminfo) not gathered"},
		{name: "cmdline unreadable", mutate: proc(func(p *facts.BrokerProcess) { p.Unread = map[string]string{"heap": "denied /proc/1234/cmdline"} }),
			status: Unknown, reason: "command line (/proc/PID/cmdline) not readable"},
	})
}

func TestJavaMajor(t *testing.T) {
	for v, want := range map[string]int{"1.8.0_392": 8, "17.0.15": 17, "25.0.3": 25, "11": 11, "x": 0} {
		if got, ok := javaMajor(v); got != want || ok != (want > 0) {
			t.Errorf("javaMajor(%q) = %d, %v; want %d", v, got, ok, want)
		}
	}
}
