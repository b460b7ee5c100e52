// Where the service finds its Kubernetes API: the default loading of @kubernetes/client-node
// (`KUBECONFIG`, then ~/.kube/config, then the in-cluster service account), or one kubeconfig file.
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeConfigForOptions {
  /** A kubeconfig file to load instead of the default loading. */
  kubeconfigPath?: string;
  /** A context of that kubeconfig other than its current one. */
  context?: string;
}

export function kubeConfigFor(options: KubeConfigForOptions = {}): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (options.kubeconfigPath) kubeConfig.loadFromFile(options.kubeconfigPath);
  else kubeConfig.loadFromDefault();
  if (options.context) kubeConfig.setCurrentContext(options.context);
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error('no Kubernetes cluster configured: set KUBECONFIG or run in a pod with a service account');
  }
  return kubeConfig;
}
