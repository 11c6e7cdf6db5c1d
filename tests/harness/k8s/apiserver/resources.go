package main

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// builtin is one served built-in resource. What is common to all of them
// lives in strategy.go and storage.go; what is particular to a kind is its
// rules (core.go, workloads.go, events.go).
type builtin struct {
	gv         schema.GroupVersion
	kind       string
	plural     string
	singular   string
	namespaced bool
	shortNames []string
	categories []string
	// newObject and newList make the Go types kept in etcd. For a resource
	// served from another one's storage (events.k8s.io/v1 events) they are
	// that resource's types, and the served types differ.
	newObject func() runtime.Object
	newList   func() runtime.Object
	// statusSubresource serves <plural>/status: then the main endpoint
	// ignores .status and /status ignores everything else.
	statusSubresource bool
	// createOnUpdate: a PUT of a missing object creates it (as upstream for
	// services, serviceaccounts, events and leases).
	createOnUpdate bool
	// storedAs is the resource ("group/plural", core: "/plural") whose storage
	// this one shares; fieldLabels then maps this version's field selector
	// keys onto the stored type's.
	storedAs    string
	fieldLabels map[string]string
	rules       rules
}

// rules is what a kind adds to the shared strategy. Embed noRules and
// override what applies.
type rules interface {
	// name checks metadata.name (DNS subdomain unless overridden).
	name(name string, prefix bool) []string
	// defaults fills in defaults when an object is decoded, from a request
	// or from etcd, as upstream's defaulting functions.
	defaults(obj runtime.Object)
	prepareForCreate(obj runtime.Object)
	prepareForUpdate(obj, old runtime.Object)
	validate(obj runtime.Object) field.ErrorList
	validateUpdate(obj, old runtime.Object) field.ErrorList
	// fields are the field selector keys beyond metadata.name and
	// metadata.namespace, with the object's values.
	fields(obj runtime.Object) fields.Set
}

type noRules struct{}

func (noRules) name(name string, prefix bool) []string {
	return apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
}
func (noRules) defaults(runtime.Object)                            {}
func (noRules) prepareForCreate(runtime.Object)                    {}
func (noRules) prepareForUpdate(_, _ runtime.Object)               {}
func (noRules) validate(runtime.Object) field.ErrorList            { return nil }
func (noRules) validateUpdate(_, _ runtime.Object) field.ErrorList { return nil }
func (noRules) fields(runtime.Object) fields.Set                   { return nil }

var (
	core       = corev1.SchemeGroupVersion
	apps       = appsv1.SchemeGroupVersion
	batch      = batchv1.SchemeGroupVersion
	coord      = coordinationv1.SchemeGroupVersion
	events     = eventsv1.SchemeGroupVersion
	networking = networkingv1.SchemeGroupVersion
	policy     = policyv1.SchemeGroupVersion
)

// builtins is the table of served built-in resources, in discovery order.
// Adding one: a row here (its rules if any), and its k8s.io/api package in
// build.sh's openapi-gen list if it is a new one.
var builtins = []*builtin{
	{gv: core, kind: "Namespace", plural: "namespaces", singular: "namespace", shortNames: []string{"ns"},
		newObject:         func() runtime.Object { return &corev1.Namespace{} },
		newList:           func() runtime.Object { return &corev1.NamespaceList{} },
		statusSubresource: true, rules: namespaceRules{}},
	{gv: core, kind: "Secret", plural: "secrets", singular: "secret", namespaced: true,
		newObject: func() runtime.Object { return &corev1.Secret{} },
		newList:   func() runtime.Object { return &corev1.SecretList{} },
		rules:     secretRules{}},
	{gv: core, kind: "ConfigMap", plural: "configmaps", singular: "configmap", namespaced: true, shortNames: []string{"cm"},
		newObject: func() runtime.Object { return &corev1.ConfigMap{} },
		newList:   func() runtime.Object { return &corev1.ConfigMapList{} },
		rules:     configMapRules{}},
	{gv: core, kind: "Service", plural: "services", singular: "service", namespaced: true,
		shortNames: []string{"svc"}, categories: []string{"all"},
		newObject:         func() runtime.Object { return &corev1.Service{} },
		newList:           func() runtime.Object { return &corev1.ServiceList{} },
		statusSubresource: true, createOnUpdate: true, rules: serviceRules{}},
	{gv: core, kind: "ServiceAccount", plural: "serviceaccounts", singular: "serviceaccount", namespaced: true,
		shortNames:     []string{"sa"},
		newObject:      func() runtime.Object { return &corev1.ServiceAccount{} },
		newList:        func() runtime.Object { return &corev1.ServiceAccountList{} },
		createOnUpdate: true, rules: noRules{}},
	{gv: core, kind: "Event", plural: "events", singular: "event", namespaced: true, shortNames: []string{"ev"},
		newObject:      func() runtime.Object { return &corev1.Event{} },
		newList:        func() runtime.Object { return &corev1.EventList{} },
		createOnUpdate: true, rules: eventRules{}},
	{gv: core, kind: "Pod", plural: "pods", singular: "pod", namespaced: true,
		shortNames: []string{"po"}, categories: []string{"all"},
		newObject:         func() runtime.Object { return &corev1.Pod{} },
		newList:           func() runtime.Object { return &corev1.PodList{} },
		statusSubresource: true, rules: podRules{}},
	{gv: apps, kind: "Deployment", plural: "deployments", singular: "deployment", namespaced: true,
		shortNames: []string{"deploy"}, categories: []string{"all"},
		newObject:         func() runtime.Object { return &appsv1.Deployment{} },
		newList:           func() runtime.Object { return &appsv1.DeploymentList{} },
		statusSubresource: true, rules: deploymentRules{}},
	{gv: batch, kind: "Job", plural: "jobs", singular: "job", namespaced: true, categories: []string{"all"},
		newObject:         func() runtime.Object { return &batchv1.Job{} },
		newList:           func() runtime.Object { return &batchv1.JobList{} },
		statusSubresource: true, rules: jobRules{}},
	{gv: coord, kind: "Lease", plural: "leases", singular: "lease", namespaced: true,
		newObject:      func() runtime.Object { return &coordinationv1.Lease{} },
		newList:        func() runtime.Object { return &coordinationv1.LeaseList{} },
		createOnUpdate: true, rules: noRules{}},
	{gv: policy, kind: "PodDisruptionBudget", plural: "poddisruptionbudgets", singular: "poddisruptionbudget",
		namespaced: true, shortNames: []string{"pdb"},
		newObject:         func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		newList:           func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		statusSubresource: true, rules: podDisruptionBudgetRules{}},
	{gv: networking, kind: "Ingress", plural: "ingresses", singular: "ingress", namespaced: true, shortNames: []string{"ing"},
		newObject:         func() runtime.Object { return &networkingv1.Ingress{} },
		newList:           func() runtime.Object { return &networkingv1.IngressList{} },
		statusSubresource: true, rules: ingressRules{}},
	// events.k8s.io/v1 is another view of the core/v1 events (as upstream):
	// one storage, converted on the way in and out (events.go).
	{gv: events, kind: "Event", plural: "events", singular: "event", namespaced: true, shortNames: []string{"ev"},
		newObject:      func() runtime.Object { return &corev1.Event{} },
		newList:        func() runtime.Object { return &corev1.EventList{} },
		createOnUpdate: true, rules: eventRules{},
		storedAs: "/events", fieldLabels: eventsV1FieldLabels},
}

func (b *builtin) resource() schema.GroupResource { return b.gv.WithResource(b.plural).GroupResource() }
func (b *builtin) key() string                    { return b.gv.Group + "/" + b.plural }
func (b *builtin) gvk() schema.GroupVersionKind   { return b.gv.WithKind(b.kind) }

// storageKey names the storage the resource's objects live in.
func (b *builtin) storageKey() string {
	if b.storedAs != "" {
		return b.storedAs
	}
	return b.key()
}

// servedGroupVersions lists the group versions in table order, once each.
func servedGroupVersions() []schema.GroupVersion {
	var out []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	for _, b := range builtins {
		if !seen[b.gv] {
			seen[b.gv] = true
			out = append(out, b.gv)
		}
	}
	return out
}
