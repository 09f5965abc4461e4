/* The --feature-gates table and parser (kube/featuregate.h). Names, stages and defaults: the
 * kube-scheduler v1.34 command-line reference (pkg/features/kube_features.go and the gates of
 * k8s.io/apiserver and k8s.io/component-base registered into the same gate). */
#include "kube/featuregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

const struct kube_feature_gate kube_feature_gates[] = {
	/* GA in v1.34 and locked to true (not in --help, still known): the scheduler's */
	{"DynamicResourceAllocation", 'G', true},
	{"MatchLabelKeysInPodAffinity", 'G', true},
	{"NodeInclusionPolicyInPodTopologySpread", 'G', true},
	{"SchedulerQueueingHints", 'G', true},
	{"APIResponseCompression", 'B', true},
	{"APIServerIdentity", 'B', true},
	{"APIServingWithRoutine", 'A', false},
	{"AllAlpha", 'A', false},
	{"AllBeta", 'B', false},
	{"AllowParsingUserUIDFromCertAuth", 'B', true},
	{"AllowUnsafeMalformedObjectDeletion", 'A', false},
	{"CBORServingAndStorage", 'A', false},
	{"CPUManagerPolicyAlphaOptions", 'A', false},
	{"CPUManagerPolicyBetaOptions", 'B', true},
	{"CSIVolumeHealth", 'A', false},
	{"ClearingNominatedNodeNameAfterBinding", 'A', false},
	{"ClientsAllowCBOR", 'A', false},
	{"ClientsPreferCBOR", 'A', false},
	{"CloudControllerManagerWebhook", 'A', false},
	{"ClusterTrustBundle", 'B', false},
	{"ClusterTrustBundleProjection", 'B', false},
	{"ComponentFlagz", 'A', false},
	{"ComponentStatusz", 'A', false},
	{"ConcurrentWatchObjectDecode", 'B', false},
	{"ContainerCheckpoint", 'B', true},
	{"ContainerRestartRules", 'A', false},
	{"ContainerStopSignals", 'A', false},
	{"ContextualLogging", 'B', true},
	{"CoordinatedLeaderElection", 'B', false},
	{"CrossNamespaceVolumeDataSource", 'A', false},
	{"CustomCPUCFSQuotaPeriod", 'A', false},
	{"DRAAdminAccess", 'B', true},
	{"DRAConsumableCapacity", 'A', false},
	{"DRADeviceBindingConditions", 'A', false},
	{"DRADeviceTaints", 'A', false},
	{"DRAExtendedResource", 'A', false},
	{"DRAPartitionableDevices", 'A', false},
	{"DRAPrioritizedList", 'B', true},
	{"DRAResourceClaimDeviceStatus", 'B', true},
	{"DRASchedulerFilterTimeout", 'B', true},
	{"DeclarativeValidation", 'B', true},
	{"DeclarativeValidationTakeover", 'B', false},
	{"DeploymentReplicaSetTerminatingReplicas", 'A', false},
	{"DetectCacheInconsistency", 'B', true},
	{"DisableCPUQuotaWithExclusiveCPUs", 'B', true},
	{"EnvFiles", 'A', false},
	{"EventedPLEG", 'A', false},
	{"ExternalServiceAccountTokenSigner", 'B', true},
	{"GracefulNodeShutdown", 'B', true},
	{"GracefulNodeShutdownBasedOnPodPriority", 'B', true},
	{"HPAConfigurableTolerance", 'A', false},
	{"HPAScaleToZero", 'A', false},
	{"HostnameOverride", 'A', false},
	{"ImageMaximumGCAge", 'B', true},
	{"ImageVolume", 'B', false},
	{"InOrderInformers", 'B', true},
	{"InPlacePodVerticalScaling", 'B', true},
	{"InPlacePodVerticalScalingExclusiveCPUs", 'A', false},
	{"InPlacePodVerticalScalingExclusiveMemory", 'A', false},
	{"InTreePluginPortworxUnregister", 'A', false},
	{"InformerResourceVersion", 'A', false},
	{"JobManagedBy", 'B', true},
	{"KubeletCrashLoopBackOffMax", 'A', false},
	{"KubeletEnsureSecretPulledImages", 'A', false},
	{"KubeletFineGrainedAuthz", 'B', true},
	{"KubeletInUserNamespace", 'A', false},
	{"KubeletPSI", 'B', true},
	{"KubeletPodResourcesDynamicResources", 'B', true},
	{"KubeletPodResourcesGet", 'B', true},
	{"KubeletSeparateDiskGC", 'B', true},
	{"KubeletServiceAccountTokenForCredentialProviders", 'B', true},
	{"ListFromCacheSnapshot", 'B', true},
	{"LocalStorageCapacityIsolationFSQuotaMonitoring", 'B', false},
	{"LoggingAlphaOptions", 'A', false},
	{"LoggingBetaOptions", 'B', true},
	{"MatchLabelKeysInPodTopologySpread", 'B', true},
	{"MatchLabelKeysInPodTopologySpreadSelectorMerge", 'B', true},
	{"MaxUnavailableStatefulSet", 'A', false},
	{"MemoryQoS", 'A', false},
	{"MutableCSINodeAllocatableCount", 'B', false},
	{"MutatingAdmissionPolicy", 'B', false},
	{"NodeLogQuery", 'B', false},
	{"NominatedNodeNameForExpectation", 'A', false},
	{"OpenAPIEnums", 'B', true},
	{"PodAndContainerStatsFromCRI", 'A', false},
	{"PodCertificateRequest", 'A', false},
	{"PodDeletionCost", 'B', true},
	{"PodLevelResources", 'B', true},
	{"PodLogsQuerySplitStreams", 'A', false},
	{"PodObservedGenerationTracking", 'B', true},
	{"PodReadyToStartContainersCondition", 'B', true},
	{"PodTopologyLabelsAdmission", 'A', false},
	{"PortForwardWebsockets", 'B', true},
	{"PreferSameTrafficDistribution", 'B', true},
	{"PreventStaticPodAPIReferences", 'B', true},
	{"ProcMountType", 'B', true},
	{"QOSReserved", 'A', false},
	{"ReduceDefaultCrashLoopBackOffDecay", 'A', false},
	{"RelaxedServiceNameValidation", 'A', false},
	{"ReloadKubeletServerCertificateFile", 'B', true},
	{"RemoteRequestHeaderUID", 'B', true},
	{"ResourceHealthStatus", 'A', false},
	{"RotateKubeletServerCertificate", 'B', true},
	{"RuntimeClassInImageCriApi", 'A', false},
	{"SELinuxChangePolicy", 'B', true},
	{"SELinuxMount", 'B', false},
	{"SELinuxMountReadWriteOncePod", 'B', true},
	{"SchedulerAsyncAPICalls", 'B', true},
	{"SchedulerAsyncPreemption", 'B', true},
	{"SchedulerPopFromBackoffQ", 'B', true},
	{"ServiceAccountNodeAudienceRestriction", 'B', true},
	{"SizeBasedListCostEstimate", 'B', true},
	{"StorageCapacityScoring", 'A', false},
	{"StorageVersionAPI", 'A', false},
	{"StorageVersionHash", 'B', true},
	{"StorageVersionMigrator", 'A', false},
	{"StrictIPCIDRValidation", 'A', false},
	{"StructuredAuthenticationConfigurationEgressSelector", 'B', true},
	{"SupplementalGroupsPolicy", 'B', true},
	{"SystemdWatchdog", 'B', true},
	{"TokenRequestServiceAccountUIDValidation", 'B', true},
	{"TopologyManagerPolicyAlphaOptions", 'A', false},
	{"TopologyManagerPolicyBetaOptions", 'B', true},
	{"TranslateStreamCloseWebsocketRequests", 'B', true},
	{"UnauthenticatedHTTP2DOSMitigation", 'B', true},
	{"UnknownVersionInteroperabilityProxy", 'A', false},
	{"UserNamespacesPodSecurityStandards", 'A', false},
	{"UserNamespacesSupport", 'B', true},
	{"WatchCacheInitializationPostStartHook", 'B', false},
	{"WatchList", 'B', true},
	{"WatchListClient", 'B', false},
	{"WindowsCPUAndMemoryAffinity", 'A', false},
	{"WindowsGracefulNodeShutdown", 'B', true},
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
	if (kube_feature_gates[i].stage == 'G' && !b)
		return kube_errf(err, "cannot set feature gate %.*s to false, feature is locked to true", (int)kl, p);
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
