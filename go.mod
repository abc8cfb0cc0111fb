module github.com/harmonium-rbm/harmonium

go 1.24.0

require github.com/traefik/yaegi v0.16.1
