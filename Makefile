# seckill: the two commands are `make run` and `make test`.
GO        ?= go
TAGS      ?= no_k8s
GOFLAGS_T := -tags $(TAGS)
PROTOC_GEN := $(CURDIR)/bin/protoc-plugins

.PHONY: run test test-short fuzz bench callgrind tenm faults faults-cluster deploy-test \
	gen gen-check build vet lint fmt tools

## run: the whole system on this machine (own Redis/MariaDB/Kafka where none is configured);
## flags through ARGS, e.g. make run ARGS="-trace otlpgrpc://127.0.0.1:4317"
ARGS ?=
run:
	$(GO) run $(GOFLAGS_T) ./cmd/standalone $(ARGS)

## test: every test, race detector on, against real Redis and MariaDB. Built against
## go-zero with its own data race fixed (devkit/racefix/modfile.sh says why).
test:
	$(GO) vet $(GOFLAGS_T) ./...
	GO=$(GO) bash devkit/racefix/modfile.sh $(CURDIR)/bin/racefix >/dev/null
	$(GO) test $(GOFLAGS_T) -race -modfile=$(CURDIR)/bin/racefix/go.mod -count=1 -timeout 30m ./...

## fuzz: run each fuzz target for FUZZTIME executions (a count, not a duration: Go 1.26's
## coordinator can fail a duration's end with a bare 'context deadline exceeded' when its
## workers are starved, golang/go#75804); seed corpora in testdata/fuzz
FUZZTIME ?= 30000x
FUZZ_TARGETS := api/internal/validate:FuzzReserveRequest api/internal/validate:FuzzReserveBody \
	api/internal/validate:FuzzCreateActivityRequest api/internal/validate:FuzzOrderNo \
	internal/event:FuzzUnmarshal internal/event:FuzzFromStream internal/event:FuzzPackedEntry \
	internal/stock:FuzzStoreArguments api/internal/middleware:FuzzFastHS256 api/internal/middleware:FuzzTokenSegments \
	api/internal/reply:FuzzGzipBody
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$fn ./$$pkg ($(FUZZTIME))"; \
		$(GO) test $(GOFLAGS_T) -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -parallel 2 ./$$pkg || exit 1; \
	done

test-short:
	$(GO) test $(GOFLAGS_T) -count=1 ./...

## bench: the ratios in the benchmark profile (noshed-dev, in-process), with the rows "prod reservations" and
## "prod sold-out" in the same run: the same sales on deploy/'s files run as separate processes (the production
## profile: Mode pro with its shedding, Telemetry, TLS zRPC, ACL Redis users, SASL broker; devkit/faults' overlay;
## one api, rpc and mq on a 3-master Redis Cluster unless -prod-topology deploy),
## each ÷ the dev profile's in the same round; the rows list every setting changed from deploy/ (-no-prod: none).
bench:
	$(GO) run $(GOFLAGS_T) ./cmd/bench

## callgrind: redis-server's instructions per reservation (batches of 32 and of 1, 4,096 reservations each after
## 512 uncounted, through stock.Store.ReserveBatch) on a private redis-server under valgrind's callgrind, with the
## functions and commands they go to; machine-independent, unlike bench's µs (devkit/callgrind; flags through ARGS,
## e.g. make callgrind ARGS="-sizes 32,64,1 -entries -keep")
callgrind:
	$(GO) run $(GOFLAGS_T) ./devkit/callgrind $(ARGS)

## tenm: the ten-million-buyer sale (10,000,000 buyers, 100,000 stock, reserve phase bounded at 15 min) against the
## system as make run starts it, with what it costs: Redis bytes per order, the services' RSS after 1,000,000 and
## after 10,000,000 buyers, the writer's lag after the reserve phase (devkit/loadgen/tenm.sh; reports in bin/tenm;
## BUYERS, STOCK, BOUND_SECONDS, CONC, CHECKPOINT, RETRIES, OUT override)
tenm:
	$(GO) build $(GOFLAGS_T) -o bin/ ./cmd/standalone ./cmd/loadgen
	bash devkit/loadgen/tenm.sh

## faults: the fault suite against the services as separate processes (private Redis, MariaDB, kfake)
faults:
	$(GO) run $(GOFLAGS_T) ./cmd/faults

## faults-cluster: the fault suite on the multi-node topology of deploy/multinode/topology.yaml (Redis Cluster
## with replicas, etcd, several rpc, mq and api processes)
faults-cluster:
	$(GO) run $(GOFLAGS_T) ./cmd/faults -cluster

## deploy-test: deploy/'s own files as a multi-node system (2+ of each service, Redis Cluster 3+3 with its ACL
## users, MariaDB with grants.sql's users, etcd auth, zRPC TLS, kfake with SCRAM users and ACLs, Prometheus with
## alerts.yml, an OTLP trace receiver), each instance on a host of its own (a network namespace; needs root),
## one overlay of addresses/ports/data dirs (devkit/faults/overlay.go), a sale,
## fault rows (kill -9 of a gateway, an inventory service and a writer, a Redis master killed, rpc-2 cut off from
## Redis), a table of checks
deploy-test:
	$(GO) run $(GOFLAGS_T) ./cmd/faults -deploy -short

build:
	$(GO) build $(GOFLAGS_T) -o bin/ ./api ./rpc ./mq ./cmd/...

vet:
	$(GO) vet $(GOFLAGS_T) ./...

## lint: golangci-lint with .golangci.yml (120 characters a line, 80 lines a function; the
## 500 lines a file are devkit/archtest's TestFileSizes, in make test). The version is the
## tool dependency of tools/lint/go.mod, a go.mod of its own: in this module's go.mod its
## requirements would raise grpc, protobuf, x/net and others the services build with (and
## protoc-gen-go's version, which the generated code records).
LINT_MOD := tools/lint/go.mod
lint:
	$(GO) tool -modfile=$(LINT_MOD) golangci-lint run --allow-parallel-runners --build-tags $(TAGS) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

tools:
	@command -v protoc >/dev/null || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	@mkdir -p $(PROTOC_GEN)
	GOBIN=$(PROTOC_GEN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go \
		google.golang.org/grpc/cmd/protoc-gen-go-grpc

## gen: regenerate every goctl output (models, rpc stubs, api routes and types, the API
## document the gateway serves at /openapi.json)
API_DOC := api/internal/apidoc/openapi.json
gen: tools
	rm -f model/*_gen.go
	$(GO) tool goctl model mysql ddl -src sql/schema.sql -dir model --style gozero
	cd rpc && PATH=$(PROTOC_GEN):$$PATH $(GO) tool goctl rpc protoc inventory.proto \
		--go_out=. --go-grpc_out=. --zrpc_out=. --style gozero -m=false
	rm -rf rpc/etc
	@if [ -f api/seckill.api ]; then \
		$(GO) tool goctl api go -api api/seckill.api -dir api --style gozero; rm -rf api/etc; fi
	@# goctl scaffolds a file for each middleware name; these two are api/internal/reserve's.
	rm -f api/internal/middleware/buyerjwtmiddleware.go api/internal/middleware/reservemiddleware.go
	gofmt -w model rpc api
	rm -rf bin/swagger
	$(GO) tool goctl api swagger --api api/seckill.api --dir bin/swagger
	$(GO) run ./devkit/openapi -swagger bin/swagger/seckill.json -api api/seckill.api -codes docs/API.md -o $(API_DOC)

## gen-check: fail when generated code is stale
gen-check: gen
	@git diff --exit-code -- model rpc api $(API_DOC) || \
		(echo "generated code is stale: run make gen and commit" && exit 1)
	@test -z "$$(git status --porcelain -- model rpc api)" || \
		(echo "untracked generated files: run make gen and commit" && exit 1)
