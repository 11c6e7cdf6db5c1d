package main

import (
	"sort"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	extensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/cache"
)

// listCRDGroups keeps the groups of established CRDs in the /apis group
// list (the non-aggregated discovery document).
//
// apiextensions-apiserver serves /apis/<group> and /apis/<group>/<version>
// of CRDs and feeds aggregated discovery, but on a cluster the /apis list
// itself is kube-aggregator's, which this server does not have. Clients
// that read the legacy list (kube-rs Discovery::run, older kubectl) need it.
func listCRDGroups(server *extensionsapiserver.CustomResourceDefinitions) {
	reserved := map[string]bool{apiextensionsv1.GroupName: true}
	for _, b := range builtins {
		reserved[b.gv.Group] = true
	}
	crds := server.Informers.Apiextensions().V1().CustomResourceDefinitions()
	groups := server.GenericAPIServer.DiscoveryGroupManager

	var mu sync.Mutex
	listed := map[string]bool{}
	refresh := func() {
		mu.Lock()
		defer mu.Unlock()
		all, err := crds.Lister().List(labels.Everything())
		if err != nil {
			return
		}
		versions := map[string]map[string]bool{}
		for _, crd := range all {
			g := crd.Spec.Group
			if reserved[g] || crd.DeletionTimestamp != nil ||
				!apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
				continue
			}
			for _, v := range crd.Spec.Versions {
				if v.Served {
					if versions[g] == nil {
						versions[g] = map[string]bool{}
					}
					versions[g][v.Name] = true
				}
			}
		}
		for g, vs := range versions {
			groups.AddGroup(apiGroup(g, vs))
			listed[g] = true
		}
		for g := range listed {
			if versions[g] == nil {
				groups.RemoveGroup(g)
				delete(listed, g)
			}
		}
	}
	crds.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { refresh() },
		UpdateFunc: func(_, _ interface{}) { refresh() },
		DeleteFunc: func(interface{}) { refresh() },
	})
}

// apiGroup lists a group's versions by Kubernetes version priority (v2 >
// v1 > v1beta2 > ...); the first is the preferred one, as kube-aggregator
// has it.
func apiGroup(group string, served map[string]bool) metav1.APIGroup {
	names := make([]string, 0, len(served))
	for v := range served {
		names = append(names, v)
	}
	sort.Slice(names, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(names[i], names[j]) > 0 })
	out := metav1.APIGroup{Name: group}
	for _, v := range names {
		out.Versions = append(out.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
	}
	out.PreferredVersion = out.Versions[0]
	return out
}
