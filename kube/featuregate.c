/* The --feature-gates table and parser (kube/featuregate.h). Names, stages and defaults: the
 * kube-scheduler v1.34 command-line reference (pkg/features/kube_features.go and the gates of
 * k8s.io/apiserver and k8s.io/component-base registered into the same gate). */
#include "kube/featuregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "kube/util.h"

const struct kube_feature_gate kube_feature_gates[] = {
	/* GA in v1.34 and locked to true (not in --help, still known): the scheduler's */
	{"DynamicResourceAllocation", 'G', true, true},
	{"MatchLabelKeysInPodAffinity", 'G', true, true},
	{"NodeInclusionPolicyInPodTopologySpread", 'G', true, true},
	{"SchedulerQueueingHints", 'G', true, true},
	/* GA or deprecated gates of the other components registered into the same gate (pkg/features,
	 * k8s.io/apiserver, apiextensions): setting one warns, setting a locked one to the other value
	 * is an error (component-base featuregate Set). */
	{"AggregatedDiscoveryRemoveBetaType", 'D', true, false},
	{"AllowDNSOnlyNodeCSR", 'D', false, false},
	{"AllowInsecureKubeletCertificateSigningRequests", 'D', false, false},
	{"AllowOverwriteTerminationGracePeriodSeconds", 'D', false, false},
	{"AllowServiceLBStatusOnNonLB", 'D', false, true},
	{"AnyVolumeDataSource", 'G', true, true},
	{"BtreeWatchCache", 'G', true, true},
	{"CPUManagerPolicyOptions", 'G', true, true},
	{"CRDValidationRatcheting", 'G', true, true},
	{"CSIMigrationPortworx", 'G', true, true},
	{"CronJobsScheduledAnnotation", 'G', true, true},
	{"CustomResourceFieldSelectors", 'G', true, true},
	{"DisableNodeKubeProxyVersion", 'D', true, true},
	{"ExecProbeTimeout", 'G', true, false},
	{"GitRepoVolumeDriver", 'D', false, false},
	{"HonorPVReclaimPolicy", 'G', true, true},
	{"InPlacePodVerticalScalingAllocatedStatus", 'D', false, false},
	{"JobBackoffLimitPerIndex", 'G', true, true},
	{"JobSuccessPolicy", 'G', true, true},
	{"KMSv1", 'D', false, false},
	{"KubeletRegistrationGetOnExistsOnly", 'D', false, false},
	{"LegacySidecarContainers", 'D', false, false},
	{"LoadBalancerIPMode", 'G', true, true},
	{"MemoryManager", 'G', true, true},
	{"MultiCIDRServiceAllocator", 'G', true, false},
	{"NFTablesProxyMode", 'G', true, true},
	{"PodIndexLabel", 'G', true, true},
	{"RecursiveReadOnlyMounts", 'G', true, true},
	{"RetryGenerateName", 'G', true, true},
	{"SeparateCacheWatchRPC", 'D', false, false},
	{"ServiceAccountTokenJTI", 'G', true, true},
	{"ServiceAccountTokenNodeBinding", 'G', true, true},
	{"ServiceAccountTokenNodeBindingValidation", 'G', true, true},
	{"ServiceAccountTokenPodNodeInfo", 'G', true, true},
	{"ServiceTrafficDistribution", 'G', true, true},
	{"SidecarContainers", 'G', true, true},
	{"SizeMemoryBackedVolumes", 'G', true, true},
	{"StatefulSetAutoDeletePVC", 'G', true, true},
	{"StorageNamespaceIndex", 'D', true, false},
	{"StrictCostEnforcementForVAP", 'G', true, true},
	{"StrictCostEnforcementForWebhooks", 'G', true, true},
	{"StructuredAuthorizationConfiguration", 'G', true, true},
	{"TopologyAwareHints", 'G', true, true},
	{"TopologyManagerPolicyOptions", 'G', true, false},
	{"WatchFromStorageWithoutResourceVersion", 'D', false, true},
	{"WindowsHostNetwork", 'D', false, false},
	{"APIResponseCompression", 'B', true, false},
	{"APIServerIdentity", 'B', true, false},
	{"APIServingWithRoutine", 'A', false, false},
	{"AllAlpha", 'A', false, false},
	{"AllBeta", 'B', false, false},
	{"AllowParsingUserUIDFromCertAuth", 'B', true, false},
	{"AllowUnsafeMalformedObjectDeletion", 'A', false, false},
	{"CBORServingAndStorage", 'A', false, false},
	{"CPUManagerPolicyAlphaOptions", 'A', false, false},
	{"CPUManagerPolicyBetaOptions", 'B', true, false},
	{"CSIVolumeHealth", 'A', false, false},
	{"ClearingNominatedNodeNameAfterBinding", 'A', false, false},
	{"ClientsAllowCBOR", 'A', false, false},
	{"ClientsPreferCBOR", 'A', false, false},
	{"CloudControllerManagerWebhook", 'A', false, false},
	{"ClusterTrustBundle", 'B', false, false},
	{"ClusterTrustBundleProjection", 'B', false, false},
	{"ComponentFlagz", 'A', false, false},
	{"ComponentStatusz", 'A', false, false},
	{"ConcurrentWatchObjectDecode", 'B', false, false},
	{"ContainerCheckpoint", 'B', true, false},
	{"ContainerRestartRules", 'A', false, false},
	{"ContainerStopSignals", 'A', false, false},
	{"ContextualLogging", 'B', true, false},
	{"CoordinatedLeaderElection", 'B', false, false},
	{"CrossNamespaceVolumeDataSource", 'A', false, false},
	{"CustomCPUCFSQuotaPeriod", 'A', false, false},
	{"DRAAdminAccess", 'B', true, false},
	{"DRAConsumableCapacity", 'A', false, false},
	{"DRADeviceBindingConditions", 'A', false, false},
	{"DRADeviceTaints", 'A', false, false},
	{"DRAExtendedResource", 'A', false, false},
	{"DRAPartitionableDevices", 'A', false, false},
	{"DRAPrioritizedList", 'B', true, false},
	{"DRAResourceClaimDeviceStatus", 'B', true, false},
	{"DRASchedulerFilterTimeout", 'B', true, false},
	{"DeclarativeValidation", 'B', true, false},
	{"DeclarativeValidationTakeover", 'B', false, false},
	{"DeploymentReplicaSetTerminatingReplicas", 'A', false, false},
	{"DetectCacheInconsistency", 'B', true, false},
	{"DisableCPUQuotaWithExclusiveCPUs", 'B', true, false},
	{"EnvFiles", 'A', false, false},
	{"EventedPLEG", 'A', false, false},
	{"ExternalServiceAccountTokenSigner", 'B', true, false},
	{"GracefulNodeShutdown", 'B', true, false},
	{"GracefulNodeShutdownBasedOnPodPriority", 'B', true, false},
	{"HPAConfigurableTolerance", 'A', false, false},
	{"HPAScaleToZero", 'A', false, false},
	{"HostnameOverride", 'A', false, false},
	{"ImageMaximumGCAge", 'B', true, false},
	{"ImageVolume", 'B', false, false},
	{"InOrderInformers", 'B', true, false},
	{"InPlacePodVerticalScaling", 'B', true, false},
	{"InPlacePodVerticalScalingExclusiveCPUs", 'A', false, false},
	{"InPlacePodVerticalScalingExclusiveMemory", 'A', false, false},
	{"InTreePluginPortworxUnregister", 'A', false, false},
	{"InformerResourceVersion", 'A', false, false},
	{"JobManagedBy", 'B', true, false},
	{"KubeletCrashLoopBackOffMax", 'A', false, false},
	{"KubeletEnsureSecretPulledImages", 'A', false, false},
	{"KubeletFineGrainedAuthz", 'B', true, false},
	{"KubeletInUserNamespace", 'A', false, false},
	{"KubeletPSI", 'B', true, false},
	{"KubeletPodResourcesDynamicResources", 'B', true, false},
	{"KubeletPodResourcesGet", 'B', true, false},
	{"KubeletSeparateDiskGC", 'B', true, false},
	{"KubeletServiceAccountTokenForCredentialProviders", 'B', true, false},
	{"ListFromCacheSnapshot", 'B', true, false},
	{"LocalStorageCapacityIsolationFSQuotaMonitoring", 'B', false, false},
	{"LoggingAlphaOptions", 'A', false, false},
	{"LoggingBetaOptions", 'B', true, false},
	{"MatchLabelKeysInPodTopologySpread", 'B', true, false},
	{"MatchLabelKeysInPodTopologySpreadSelectorMerge", 'B', true, false},
	{"MaxUnavailableStatefulSet", 'A', false, false},
	{"MemoryQoS", 'A', false, false},
	{"MutableCSINodeAllocatableCount", 'B', false, false},
	{"MutatingAdmissionPolicy", 'B', false, false},
	{"NodeLogQuery", 'B', false, false},
	{"NominatedNodeNameForExpectation", 'A', false, false},
	{"OpenAPIEnums", 'B', true, false},
	{"PodAndContainerStatsFromCRI", 'A', false, false},
	{"PodCertificateRequest", 'A', false, false},
	{"PodDeletionCost", 'B', true, false},
	{"PodLevelResources", 'B', true, false},
	{"PodLogsQuerySplitStreams", 'A', false, false},
	{"PodObservedGenerationTracking", 'B', true, false},
	{"PodReadyToStartContainersCondition", 'B', true, false},
	{"PodTopologyLabelsAdmission", 'A', false, false},
	{"PortForwardWebsockets", 'B', true, false},
	{"PreferSameTrafficDistribution", 'B', true, false},
	{"PreventStaticPodAPIReferences", 'B', true, false},
	{"ProcMountType", 'B', true, false},
	{"QOSReserved", 'A', false, false},
	{"ReduceDefaultCrashLoopBackOffDecay", 'A', false, false},
	{"RelaxedServiceNameValidation", 'A', false, false},
	{"ReloadKubeletServerCertificateFile", 'B', true, false},
	{"RemoteRequestHeaderUID", 'B', true, false},
	{"ResourceHealthStatus", 'A', false, false},
	{"RotateKubeletServerCertificate", 'B', true, false},
	{"RuntimeClassInImageCriApi", 'A', false, false},
	{"SELinuxChangePolicy", 'B', true, false},
	{"SELinuxMount", 'B', false, false},
	{"SELinuxMountReadWriteOncePod", 'B', true, false},
	{"SchedulerAsyncAPICalls", 'B', true, false},
	{"SchedulerAsyncPreemption", 'B', true, false},
	{"SchedulerPopFromBackoffQ", 'B', true, false},
	{"ServiceAccountNodeAudienceRestriction", 'B', true, false},
	{"SizeBasedListCostEstimate", 'B', true, false},
	{"StorageCapacityScoring", 'A', false, false},
	{"StorageVersionAPI", 'A', false, false},
	{"StorageVersionHash", 'B', true, false},
	{"StorageVersionMigrator", 'A', false, false},
	{"StrictIPCIDRValidation", 'A', false, false},
	{"StructuredAuthenticationConfigurationEgressSelector", 'B', true, false},
	{"SupplementalGroupsPolicy", 'B', true, false},
	{"SystemdWatchdog", 'B', true, false},
	{"TokenRequestServiceAccountUIDValidation", 'B', true, false},
	{"TopologyManagerPolicyAlphaOptions", 'A', false, false},
	{"TopologyManagerPolicyBetaOptions", 'B', true, false},
	{"TranslateStreamCloseWebsocketRequests", 'B', true, false},
	{"UnauthenticatedHTTP2DOSMitigation", 'B', true, false},
	{"UnknownVersionInteroperabilityProxy", 'A', false, false},
	{"UserNamespacesPodSecurityStandards", 'A', false, false},
	{"UserNamespacesSupport", 'B', true, false},
	{"WatchCacheInitializationPostStartHook", 'B', false, false},
	{"WatchList", 'B', true, false},
	{"WatchListClient", 'B', false, false},
	{"WindowsCPUAndMemoryAffinity", 'A', false, false},
	{"WindowsGracefulNodeShutdown", 'B', true, false},
};
const size_t kube_nfeature_gates = sizeof kube_feature_gates / sizeof kube_feature_gates[0];

static int find(const char *name, size_t n)
{
	for (size_t i = 0; i < kube_nfeature_gates; i++)
		if (strlen(kube_feature_gates[i].name) == n && !strncmp(kube_feature_gates[i].name, name, n))
			return (int)i;
	return -1;
}

/* One "Name=value" or "kube:Name=value" pair of n bytes. */
static int parse_pair(const char *p, size_t n, int *set, char **err)
{
	const char *colon = memchr(p, ':', n), *eq = memchr(p, '=', n);
	if (colon && (!eq || colon < eq)) {
		if (colon - p != 4 || strncmp(p, "kube", 4))
			return kube_errf(err, "unrecognized component: %.*s", (int)(colon - p), p);
		n -= (size_t)(colon + 1 - p);
		p = colon + 1;
	}
	if (!eq)
		return kube_errf(err, "missing bool value for %.*s", (int)n, p);
	size_t kl = (size_t)(eq - p);
	while (kl && p[kl - 1] == ' ')
		kl--;
	const char *v = eq + 1;
	size_t vl = n - (size_t)(v - p);
	while (vl && *v == ' ')
		v++, vl--;
	while (vl && v[vl - 1] == ' ')
		vl--;
	char val[64];
	snprintf(val, sizeof val, "%.*s", (int)(vl < 63 ? vl : 63), v);
	int i = find(p, kl);
	if (i < 0)
		return kube_errf(err, "unrecognized feature gate: %.*s", (int)kl, p);
	bool b;
	if (vl >= 63 || kube_parse_bool(val, &b) != 0)
		return kube_errf(err, "invalid value of %.*s=%s, err: strconv.ParseBool: parsing \"%s\": invalid syntax",
				 (int)kl, p, val, val);
	const struct kube_feature_gate *g = &kube_feature_gates[i];
	if (g->locked && b != g->def)
		return kube_errf(err, "cannot set feature gate %.*s to %s, feature is locked to %s", (int)kl, p,
				 b ? "true" : "false", g->def ? "true" : "false");
	if (g->stage == 'G' || g->stage == 'D') {
		char msg[256];
		snprintf(msg, sizeof msg, "Setting %s feature gate %.*s=%s. It will be removed in a future release.",
			 g->stage == 'G' ? "GA" : "deprecated", (int)kl, p, b ? "true" : "false");
		klog_warning(msg);
	}
	if (set)
		set[i] = b;
	return 0;
}

int kube_feature_gates_parse(const char *value, int *set, char **err)
{
	const char *p = value;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n && parse_pair(p, n, set, err) != 0)
			return -1;
		p += n + (e ? 1 : 0);
	}
	return 0;
}

bool kube_feature_gate_enabled(const int *set, const char *name)
{
	int i = find(name, strlen(name));
	if (i < 0)
		return false;
	return set && set[i] >= 0 ? set[i] != 0 : kube_feature_gates[i].def;
}
