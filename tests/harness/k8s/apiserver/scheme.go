package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// The scheme of the built-in resources.
//
// Upstream, each group has internal Go types (k8s.io/kubernetes/pkg/apis/...)
// that the REST handlers convert every version to and from. Those are not
// available here, and this server serves one version per group, so each
// versioned k8s.io/api type is registered as its group's internal ("hub")
// type too: conversion to the hub is then the identity. The exception is
// events.k8s.io/v1 Event, whose hub is core/v1 Event (events.go converts).
var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	// The versioned types, and with core/v1 the meta/v1 options and
	// unversioned types (Status, APIGroupList, ...) every server registers.
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(appsv1.AddToScheme(scheme))
	utilruntime.Must(batchv1.AddToScheme(scheme))
	utilruntime.Must(coordinationv1.AddToScheme(scheme))
	utilruntime.Must(eventsv1.AddToScheme(scheme))
	utilruntime.Must(policyv1.AddToScheme(scheme))
	utilruntime.Must(networkingv1.AddToScheme(scheme))

	defaulted := map[string]bool{}
	for _, b := range builtins {
		hub := schema.GroupVersion{Group: b.gv.Group, Version: runtime.APIVersionInternal}
		scheme.AddKnownTypeWithName(hub.WithKind(b.kind), b.newObject())
		scheme.AddKnownTypeWithName(hub.WithKind(b.kind+"List"), b.newList())

		if b.storedAs == "" && !defaulted[b.key()] {
			defaulted[b.key()] = true
			rules := b.rules
			scheme.AddTypeDefaultingFunc(b.newObject(), func(obj interface{}) { rules.defaults(obj.(runtime.Object)) })
		}
		utilruntime.Must(scheme.AddFieldLabelConversionFunc(b.gvk(), fieldLabelConversion(b)))
	}
	registerEventConversions(scheme)
}

// fieldLabelConversion accepts the field selector keys of a resource and
// maps them onto the keys its storage indexes (storage.go's attributes).
func fieldLabelConversion(b *builtin) runtime.FieldLabelConversionFunc {
	supported := b.rules.fields(b.newObject())
	return func(label, value string) (string, string, error) {
		switch {
		case label == "metadata.name" || label == "metadata.namespace" && b.namespaced:
			return label, value, nil
		case b.fieldLabels != nil:
			if stored, ok := b.fieldLabels[label]; ok {
				return stored, value, nil
			}
		default:
			if _, ok := supported[label]; ok {
				return label, value, nil
			}
		}
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}
