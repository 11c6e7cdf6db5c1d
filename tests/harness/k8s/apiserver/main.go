// Command litellm-crossplane-apiserver is the Kubernetes API server of this
// repository's integration tests: one process in front of one etcd.
//
// It is the real k8s.io/apiextensions-apiserver (CustomResourceDefinitions
// with everything that implies: structural schemas, CEL rules, defaulting,
// pruning, subresources, server-side apply, watch) extended with the few
// built-in resources the tests and the provider use (see resources.go),
// stored through the generic etcd registry of k8s.io/apiserver with the real
// k8s.io/api types. No controller runs: what a test needs of one, the test
// does itself.
//
// Files:
//
//	main.go       command line, server configuration, start-up hooks
//	scheme.go     the runtime.Scheme of the built-in types
//	resources.go  the table of served built-in resources
//	strategy.go   create/update/delete semantics shared by all built-ins
//	storage.go    etcd-backed REST storage and its installation
//	core.go       per-kind rules: namespaces, secrets, configmaps, services, pods
//	workloads.go  per-kind rules: deployments, jobs (and the pod template)
//	events.go     core/v1 <-> events.k8s.io/v1 Event conversion, event fields
//	discovery.go  CRD groups in the /apis group list
package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"
	noopoteltrace "go.opentelemetry.io/otel/trace/noop"

	corev1 "k8s.io/api/core/v1"
	extensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	extensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	authnapi "k8s.io/apiserver/pkg/apis/apiserver"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/cli"
	"k8s.io/kube-openapi/pkg/common"
	netutils "k8s.io/utils/net"

	builtinopenapi "litellm-crossplane/apiserver/openapi"
)

const name = "litellm-crossplane-apiserver"

func main() {
	ctx := genericapiserver.SetupSignalContext()
	o := options.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)
	harnessDefaults(o)
	cmd := &cobra.Command{
		Use:   name,
		Short: "Kubernetes API server for tests: apiextensions-apiserver plus a few built-in resources",
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.ServerRunOptions.ComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return run(c.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}

// harnessDefaults changes option defaults (before flags are parsed, so a
// flag still overrides them) to what a single-process test server needs.
func harnessDefaults(o *options.CustomResourceDefinitionsServerOptions) {
	ro := o.RecommendedOptions
	// Clients authenticate with certificates of the --client-ca-file; there
	// is no TokenReview to delegate to, no anonymous user and no authorizer:
	// every authenticated client may do everything.
	ro.Authentication.RemoteKubeConfigFileOptional = true
	ro.Authentication.SkipInClusterLookup = true
	ro.Authentication.Anonymous = &authnapi.AnonymousAuthConfig{Enabled: false}
	ro.Authorization = nil
	// No API Priority and Fairness (its configuration objects are not served)
	// and no garbage collector (ownerReferences are stored, nothing collects).
	ro.Features.EnablePriorityAndFairness = false
	ro.Etcd.EnableGarbageCollection = false
	// Of the admission plugins only NamespaceLifecycle: webhooks and
	// admission policies need APIs this server does not serve.
	ro.Admission.DisablePlugins = []string{
		"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook",
		"MutatingAdmissionPolicy", "ValidatingAdmissionPolicy",
	}
}

func run(ctx context.Context, o *options.CustomResourceDefinitionsServerOptions) error {
	config, err := newConfig(o)
	if err != nil {
		return err
	}
	builtinStorage := newRESTOptionsGetter(*o.RecommendedOptions.Etcd, config.GenericConfig)

	completed := config.Complete()
	// apiextensions-apiserver leaves /apis to kube-aggregator; here it is
	// served by this server itself (see discovery.go).
	completed.GenericConfig.EnableDiscovery = true
	server, err := completed.New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	if err := installBuiltins(server.GenericAPIServer, builtinStorage); err != nil {
		return err
	}
	listCRDGroups(server)
	server.GenericAPIServer.AddPostStartHookOrDie("create-default-namespaces", createDefaultNamespaces)
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// newConfig is what options.Config of apiextensions-apiserver does, except
// that the server's own clients (the informers of admission and of the CRD
// webhooks' service resolver) talk to itself through the loopback
// connection instead of a kubeconfig, and that the OpenAPI definitions
// include the built-in types.
func newConfig(o *options.CustomResourceDefinitionsServerOptions) (*extensionsapiserver.Config, error) {
	ro := o.RecommendedOptions
	if err := ro.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil,
		[]net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	admission := ro.Admission
	ro.Admission, ro.CoreAPI = nil, nil // applied below, once the loopback client exists

	cfg := genericapiserver.NewRecommendedConfig(extensionsapiserver.Codecs)
	if err := o.ServerRunOptions.ApplyTo(&cfg.Config); err != nil {
		return nil, err
	}
	if err := ro.ApplyTo(cfg); err != nil {
		return nil, err
	}
	if err := o.APIEnablement.ApplyTo(&cfg.Config, extensionsapiserver.DefaultAPIResourceConfigSource(),
		extensionsapiserver.Scheme); err != nil {
		return nil, err
	}

	loopback := cfg.LoopbackClientConfig
	kubeClient, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	dynamicClient, err := dynamic.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	cfg.ClientConfig = loopback
	cfg.SharedInformerFactory = informers.NewSharedInformerFactory(kubeClient, 10*time.Minute)
	if err := admission.ApplyTo(&cfg.Config, cfg.SharedInformerFactory, kubeClient, dynamicClient,
		ro.FeatureGate, cfg.EffectiveVersion); err != nil {
		return nil, err
	}

	definitions := utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(openAPIDefinitions)
	// The namer gives definitions their REST names (io.k8s.api.core.v1.Secret)
	// and group-version-kinds; client-go's scheme knows every k8s.io/api type.
	namer := openapinamer.NewDefinitionNamer(extensionsapiserver.Scheme, clientgoscheme.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions, namer)
	cfg.OpenAPIConfig.Info.Title = name
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
	cfg.OpenAPIV3Config.Info.Title = name

	return &extensionsapiserver.Config{
		GenericConfig: cfg,
		ExtraConfig: extensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: options.NewCRDRESTOptionsGetter(*ro.Etcd, cfg.ResourceTransformers, cfg.StorageObjectCountTracker),
			ServiceResolver:      noServiceResolver{},
			AuthResolverWrapper: webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, loopback,
				noopoteltrace.NewTracerProvider()),
		},
	}, nil
}

// openAPIDefinitions are apiextensions-apiserver's own plus those generated
// by openapi-gen for the served k8s.io/api packages (build.sh). Server-side
// apply takes its merge keys and list types from them.
func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := extensionsopenapi.GetOpenAPIDefinitions(ref)
	for k, v := range builtinopenapi.GetOpenAPIDefinitions(ref) {
		defs[k] = v
	}
	return defs
}

// noServiceResolver answers conversion webhooks configured with a Service:
// Services here have no endpoints (a webhook URL still works).
type noServiceResolver struct{}

func (noServiceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, fmt.Errorf("service %s/%s:%d: this test API server resolves no Services; use a webhook url", namespace, name, port)
}

// defaultNamespaces exist on every cluster; tests and clients expect them.
var defaultNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// createDefaultNamespaces runs once the server serves; /readyz reports not
// ready until it returned.
func createDefaultNamespaces(hook genericapiserver.PostStartHookContext) error {
	client, err := kubernetes.NewForConfig(hook.LoopbackClientConfig)
	if err != nil {
		return err
	}
	for _, ns := range defaultNamespaces {
		object := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		err := wait.PollUntilContextTimeout(hook, 50*time.Millisecond, time.Minute, true,
			func(ctx context.Context) (bool, error) {
				_, err := client.CoreV1().Namespaces().Create(ctx, object, metav1.CreateOptions{})
				return err == nil || apierrors.IsAlreadyExists(err), nil
			})
		if err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return nil
}
