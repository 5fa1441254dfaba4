package benchrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"
)

// CPU profiles of the first round's sales (Config.ProdPprof): what the production profile's
// processes spend their CPU on beside what the dev profile's one process does.

// profiling is the CPU profiles being taken; wait ends them and lists the files written.
type profiling struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	files []string
	errs  []error
}

func (p *profiling) done(file string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", filepath.Base(file), err))
		return
	}
	p.files = append(p.files, file)
}

// wait waits for every profile and returns the files written and the profiles that failed.
func (p *profiling) wait() ([]string, error) {
	p.wg.Wait()
	return p.files, errors.Join(p.errs...)
}

// profileRemote takes a CPU profile of d from each DevServer of targets (name -> address,
// its pprof on) into dir/<prefix>-<name>.pprof.
func profileRemote(ctx context.Context, dir, prefix string, targets map[string]string, d time.Duration) *profiling {
	p := &profiling{}
	for name, addr := range targets {
		file := filepath.Join(dir, prefix+"-"+name+".pprof")
		p.wg.Go(func() { p.done(file, fetchProfile(ctx, addr, file, d)) })
	}
	return p
}

// fetchProfile writes the CPU profile of d that addr's /debug/pprof/profile serves to file.
func fetchProfile(ctx context.Context, addr, file string, d time.Duration) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(1, int(d.Seconds())))
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s %s", url, resp.Status, b)
	}
	return writeFile(file, resp.Body)
}

func writeFile(file string, r io.Reader) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// profileSelf takes a CPU profile of d of this process (runtime/pprof) into
// dir/<prefix>.pprof.
func profileSelf(ctx context.Context, dir, prefix string, d time.Duration) *profiling {
	p := &profiling{}
	file := filepath.Join(dir, prefix+".pprof")
	f, err := os.Create(file)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		p.done(file, err)
		return p
	}
	p.wg.Go(func() {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		pprof.StopCPUProfile()
		p.done(file, f.Close())
	})
	return p
}

// noteProfiles adds the profiles' files (or why they failed) to the run's notes.
func (r *round) noteProfiles(what string, p *profiling) {
	files, err := p.wait()
	if len(files) > 0 {
		*r.notes = append(*r.notes, fmt.Sprintf("CPU profiles of %s (%s from its start): %v", what, r.c.ProdPprofFor,
			files))
	}
	if err != nil {
		*r.notes = append(*r.notes, fmt.Sprintf("CPU profiles of %s failed: %v", what, err))
	}
}
