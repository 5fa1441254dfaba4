package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const userHZ = 100

// readProc reads pid's resident set (VmRSS of /proc/<pid>/status) and CPU time (utime +
// stime of /proc/<pid>/stat).
func readProc(pid int) (ProcSample, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return ProcSample{}, err
	}
	var s ProcSample
	found := false
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return ProcSample{}, fmt.Errorf("%s/status: VmRSS %q", dir, v)
			}
			s.RSS, found = kb*1024, true
		}
	}
	if !found {
		return ProcSample{}, fmt.Errorf("%s/status has no VmRSS (a zombie?)", dir)
	}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return ProcSample{}, err
	}
	// The fields after the command's closing parenthesis, from field 3 (state): utime and
	// stime are fields 14 and 15.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ProcSample{}, fmt.Errorf("%s/stat: %q", dir, stat)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return ProcSample{}, fmt.Errorf("%s/stat: %q", dir, stat)
	}
	ut, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcSample{}, fmt.Errorf("%s/stat: utime %q stime %q", dir, fields[11], fields[12])
	}
	s.CPU = time.Duration(ut+st) * time.Second / userHZ
	return s, nil
}

// procName is pid's command name (/proc/<pid>/comm), or "pid N" when unreadable.
func procName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "pid " + strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b))
}
