package fanout

import (
	"errors"
	"fmt"
	"syscall"
)

// Open files a fan-out of connections may use: FilesReserved for the
// process itself (std streams, the poller, the inventory, known_hosts,
// the agent, the report, bastion connections), FilesPerItem for each
// item in flight (its socket, plus an identity file read during auth).
const (
	FilesReserved = 64
	FilesPerItem  = 2
)

// OpenFileLimit is the process's open-file limit (RLIMIT_NOFILE, soft;
// the Go runtime raises it to the hard limit at start), 0 if unknown.
func OpenFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}

// FitOpenFiles bounds a fan-out of want connections (a scan's, an
// apply's, a rollback's, kaudit trust's) by this process's open-file
// limit: the one home of that bound. It returns the bound and, when it is
// lower than want, a notice saying why and what to do; the bound is at
// least 1.
func FitOpenFiles(want int) (int, string) { return fitFiles(want, OpenFileLimit()) }

// fitFiles is FitOpenFiles with the open-file limit files (0: unknown,
// want is kept).
func fitFiles(want int, files uint64) (int, string) {
	if files == 0 || want <= 0 {
		return want, ""
	}
	fit := 1
	if files > FilesReserved+FilesPerItem {
		fit = int(min((files-FilesReserved)/FilesPerItem, uint64(1<<30)))
	}
	if want <= fit {
		return want, ""
	}
	return fit, fmt.Sprintf("concurrency %d lowered to %d: the open-file limit is %d (%d per host in flight, %d kept for kaudit); raise it (ulimit -n, LimitNOFILE=, the container's nofile) to go wider",
		want, fit, files, FilesPerItem, FilesReserved)
}

// localErrnos are failures of kaudit's own machine, never of a host: out
// of open files, memory, buffers or disk.
var localErrnos = []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS, syscall.ENOSPC, syscall.EDQUOT}

// LocalFault is the errno of err when it is one of kaudit's own machine
// (out of open files, memory, buffers or disk), else 0: the one test of
// "not the host's fault" (transport's facts.KindLocal, the facts spool).
func LocalFault(err error) syscall.Errno {
	for _, n := range localErrnos {
		if errors.Is(err, n) {
			return n
		}
	}
	return 0
}

// LocalFaultHint is what to do about a LocalFault.
const LocalFaultHint = "the host is not at fault: raise kaudit's open-file limit (ulimit -n, LimitNOFILE=), or free memory or disk on the machine kaudit runs on"

// KeptFit says how many of want connections kept open between fan-outs
// (kaudit serve's, one file each) fit the open-file limit beside a
// fan-out of inFlight items and extra files held otherwise (serve's HTTP
// connections), and the limit that would fit all of them. The limit is
// 0 when unknown (then all fit).
func KeptFit(want, inFlight, extra int) (fit int, need, limit uint64) {
	return keptFit(want, inFlight, extra, OpenFileLimit())
}

func keptFit(want, inFlight, extra int, files uint64) (fit int, need, limit uint64) {
	need = FilesReserved + uint64(inFlight)*FilesPerItem + uint64(extra) + uint64(want)
	if files == 0 || files >= need {
		return want, need, files
	}
	if room := int64(files) - int64(need) + int64(want); room > 0 {
		fit = int(room)
	}
	return fit, need, files
}
