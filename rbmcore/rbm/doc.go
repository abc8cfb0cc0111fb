// Package rbm is the native core of Harmonium: unit layers, the Restricted
// Boltzmann Machine generic over its two layers, samplers, partition
// functions and model files.
package rbm
