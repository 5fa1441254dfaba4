package apiserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// clientMain is a program of the client module: it reserves through the client oapi-codegen
// generated from /openapi.json, then reads the order, and prints what it got as JSON.
const clientMain = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"oapiclienttest/oapiclient"
)

type outcome struct {
	Status     int              ` + "`json:\"status\"`" + `
	Reserved   *oapiclient.ReserveResp ` + "`json:\"reserved\"`" + `
	Error      *oapiclient.Error ` + "`json:\"error\"`" + `
	OrderState string           ` + "`json:\"order_state\"`" + `
}

func main() {
	aid, _ := strconv.Atoi(os.Getenv("SECKILL_ACTIVITY"))
	qty, _ := strconv.Atoi(os.Getenv("SECKILL_QUANTITY"))
	bearer := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+os.Getenv("SECKILL_TOKEN"))
		return nil
	}
	c, err := oapiclient.NewClientWithResponses(os.Getenv("SECKILL_BASE"), oapiclient.WithRequestEditorFn(bearer))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	resp, err := c.BuyerReserveWithResponse(ctx, oapiclient.ReserveReq{ActivityId: aid, Quantity: &qty,
		RequestId: os.Getenv("SECKILL_REQUEST_ID")})
	if err != nil {
		panic(err)
	}
	out := outcome{Status: resp.StatusCode(), Reserved: resp.JSON200, Error: resp.JSON409}
	if resp.JSON200 != nil {
		order, err := c.BuyerGetOrderWithResponse(ctx, resp.JSON200.OrderNo)
		if err != nil || order.JSON200 == nil {
			panic(fmt.Sprint(err, order.Status(), string(order.Body)))
		}
		out.OrderState = string(order.JSON200.Status)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
`

// clientOutcome is what clientMain prints.
type clientOutcome struct {
	Status   int `json:"status"`
	Reserved *struct {
		OrderNo   string `json:"order_no"`
		Quantity  int64  `json:"quantity"`
		Status    string `json:"status"`
		Remaining int64  `json:"remaining"`
	} `json:"reserved"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
	OrderState string `json:"order_state"`
}

// TestOpenAPIClientReserves generates a Go client from the served /openapi.json with
// oapi-codegen (tools/oapi/go.mod's version, in a module of its own made from that go.mod),
// vets and builds it, and makes a reservation with it against the gateway: 200 with the order,
// the order readable through it, Redis's book moved by the quantity; a quantity over the
// limit is the documented 409 with the Error body.
func TestOpenAPIClientReserves(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 5, "per_user_limit": 2})
	mod := clientModule(t, e)
	goCmd(t, mod, "vet", "./...")
	bin := filepath.Join(mod, "client")
	goCmd(t, mod, "build", "-o", bin, ".")

	buyer := buyerToken(t, 301)
	got := runClient(t, bin, e.base, buyer, a.ActivityID, 2, "oapi-client-1")
	if got.Status != 200 || got.Reserved == nil || got.Reserved.Status != "reserved" || got.Reserved.Quantity != 2 ||
		got.Reserved.Remaining != 3 || got.OrderState != "reserved" {
		t.Fatalf("reservation through the generated client: %+v %+v", got, got.Reserved)
	}
	if remaining, locked, _ := e.redisStock(a.ActivityID); remaining != 3 || locked != 2 {
		t.Fatalf("Redis book after the client's reservation: remaining %d, locked %d", remaining, locked)
	}
	over := runClient(t, bin, e.base, buyer, a.ActivityID, 1, "oapi-client-2")
	if over.Status != 409 || over.Error == nil || over.Error.Code != "LIMIT_EXCEEDED" {
		t.Fatalf("over the limit through the generated client: %+v %+v", over, over.Error)
	}
}

// clientModule writes a module with tools/oapi's requirements, the served document and the
// client oapi-codegen generates from it (package oapiclient), and clientMain.
func clientModule(t *testing.T, e *env) string {
	t.Helper()
	dir := t.TempDir()
	tools, err := filepath.Abs("../../tools/oapi")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(tools, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(tools, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod = []byte(strings.Replace(string(gomod), "module github.com/seckill/seckill/tools/oapi",
		"module oapiclienttest", 1))
	resp, err := e.client.Get(e.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": gomod, "go.sum": gosum, "openapi.json": doc,
		"main.go": []byte(clientMain)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "oapiclient"), 0o700); err != nil {
		t.Fatal(err)
	}
	goCmd(t, dir, "tool", "oapi-codegen", "-generate", "types,client", "-package", "oapiclient",
		"-o", filepath.Join(dir, "oapiclient", "client.gen.go"), filepath.Join(dir, "openapi.json"))
	return dir
}

// goCmd runs the go command in dir and fails the test on an error.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// runClient runs the built client once and decodes what it printed.
func runClient(t *testing.T, bin, base, token string, aid, qty int64, requestID string) clientOutcome {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "SECKILL_BASE="+base, "SECKILL_TOKEN="+token,
		"SECKILL_ACTIVITY="+strconv.FormatInt(aid, 10), "SECKILL_QUANTITY="+strconv.FormatInt(qty, 10),
		"SECKILL_REQUEST_ID="+requestID)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var got clientOutcome
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client printed %q: %v", out, err)
	}
	return got
}
