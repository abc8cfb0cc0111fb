module github.com/harmonium-rbm/harmonium

go 1.24.0

require github.com/traefik/yaegi v0.16.1

require (
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/netlib v0.0.0-20190313105609-8cb42192e0e0
)
