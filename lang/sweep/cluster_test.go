package sweep_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cluster is a one-node Slurm cluster on localhost that the tests start
// (as root, from Debian's slurm-wlm and munge packages) and stop, with its
// own configuration, state and munge key in a temporary directory
// (SLURM_CONF points the Slurm commands at it).
var cluster struct {
	once    sync.Once
	dir     string
	skip    string // why there is no cluster (Slurm absent, not root)
	err     error  // why it failed to start
	daemons []*exec.Cmd
	started time.Duration
}

// needSlurm starts the cluster once, or skips the test when Slurm cannot
// run here; in CI (CI=true) as root a missing Slurm fails the test.
func needSlurm(t *testing.T) {
	t.Helper()
	cluster.once.Do(startCluster)
	if cluster.skip != "" {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("the Slurm tests must run in CI: %s (.ci/run installs slurm-wlm and munge)", cluster.skip)
		}
		t.Skipf("no Slurm cluster: %s", cluster.skip)
	}
	if cluster.err != nil {
		t.Fatalf("starting the test Slurm cluster in %s: %v", cluster.dir, cluster.err)
	}
}

func startCluster() {
	if os.Geteuid() != 0 {
		cluster.skip = "the test cluster's daemons need root"
		return
	}
	for _, cmd := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			cluster.skip = cmd + " is not installed (apt-get install slurm-wlm munge)"
			return
		}
	}
	mu, err := user.Lookup("munge")
	if err != nil {
		cluster.skip = "no munge user (apt-get install munge)"
		return
	}
	start := time.Now()
	cluster.err = bootCluster(mu)
	cluster.started = time.Since(start)
	if cluster.err != nil {
		stopCluster()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func bootCluster(mu *user.User) error {
	dir, err := os.MkdirTemp("", "hm-slurm-")
	if err != nil {
		return err
	}
	cluster.dir = dir
	uid, _ := strconv.Atoi(mu.Uid)
	gid, _ := strconv.Atoi(mu.Gid)
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	// munged wants a private directory for its key and a world-searchable
	// one for its socket, both its own.
	mdir, sdir := filepath.Join(dir, "munge"), filepath.Join(dir, "sock")
	key := make([]byte, 1024)
	f, err := os.Open("/dev/urandom")
	if err != nil {
		return err
	}
	_, err = f.Read(key)
	f.Close()
	if err != nil {
		return err
	}
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{mdir, 0o700}, {sdir, 0o755}} {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			return err
		}
		if err := os.Chown(d.path, uid, gid); err != nil {
			return err
		}
	}
	keyPath := filepath.Join(mdir, "munge.key")
	if err := os.WriteFile(keyPath, key, 0o400); err != nil {
		return err
	}
	if err := os.Chown(keyPath, uid, gid); err != nil {
		return err
	}
	sock := filepath.Join(sdir, "munge.socket")
	munged := exec.Command("munged", "--foreground", "--key-file="+keyPath, "--socket="+sock,
		"--pid-file="+filepath.Join(mdir, "munged.pid"), "--log-file="+filepath.Join(mdir, "munged.log"),
		"--seed-file="+filepath.Join(mdir, "munged.seed"))
	munged.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
	if err := startDaemon(munged, filepath.Join(dir, "munged.out")); err != nil {
		return err
	}
	if err := waitFile(sock, 20*time.Second); err != nil {
		return fmt.Errorf("munged: %w (see %s)", err, filepath.Join(mdir, "munged.log"))
	}
	ctlPort, err := freePort()
	if err != nil {
		return err
	}
	dPort, err := freePort()
	if err != nil {
		return err
	}
	for _, d := range []string{"state", "spool", "log"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`ClusterName=hmtest
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[3]s
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/log/slurmctld.log
SlurmdLogFile=%[4]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/filetxt
JobCompLoc=%[4]s/log/jobcomp.txt
AccountingStorageType=accounting_storage/none
SchedulerParameters=batch_sched_delay=0
MinJobAge=300
KillWait=5
ReturnToService=2
MpiDefault=none
NodeName=localhost CPUs=%[5]d State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, ctlPort, dPort, sock, dir, max(2, runtime.NumCPU()))
	confPath := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	os.Setenv("SLURM_CONF", confPath)
	if err := startDaemon(exec.Command("slurmctld", "-D", "-i"), filepath.Join(dir, "log", "slurmctld.out")); err != nil {
		return err
	}
	if err := startDaemon(exec.Command("slurmd", "-D", "-N", "localhost"), filepath.Join(dir, "log", "slurmd.out")); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := exec.Command("sinfo", "-h", "-o", "%T").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the node is not idle after 60 s (sinfo: %q; see %s/log)", out, dir)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func startDaemon(cmd *exec.Cmd, logPath string) error {
	out, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	out.Close()
	cluster.daemons = append(cluster.daemons, cmd)
	return nil
}

func waitFile(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear in %v", path, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopCluster cancels the cluster's jobs and stops its daemons (slurmd,
// slurmctld, munged: the reverse of their start) and removes its directory.
func stopCluster() {
	if len(cluster.daemons) == 0 {
		return
	}
	exec.Command("scancel", "--user=root").Run()
	for k := len(cluster.daemons) - 1; k >= 0; k-- {
		d := cluster.daemons[k]
		syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-d.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	cluster.daemons = nil
	if os.Getenv("HARMONIUM_KEEP_SLURM") == "" {
		os.RemoveAll(cluster.dir)
	}
}
