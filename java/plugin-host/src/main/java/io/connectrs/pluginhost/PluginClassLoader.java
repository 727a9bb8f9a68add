package io.connectrs.pluginhost;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.regex.Pattern;

/**
 * One plugin's class loader, with Apache's {@code PluginClassLoader} rules: the plugin's own
 * classes first, except the Java platform, SLF4J and Kafka's API packages, which come from the
 * host's class path so plugin and host share them (Apache's {@code PluginUtils} patterns).
 */
final class PluginClassLoader extends URLClassLoader {
    static {
        ClassLoader.registerAsParallelCapable();
    }

    /** Loaded from the parent (Apache's EXCLUSIONS_PATTERN). */
    private static final Pattern PARENT_FIRST = Pattern.compile(
            "^(?:java|javax|org\\.omg|org\\.w3c\\.dom|org\\.apache\\.kafka|org\\.slf4j)\\..*$");

    /** Kafka classes a plugin may ship itself (Apache's INCLUDE_PATTERN). */
    private static final Pattern ISOLATED_KAFKA = Pattern.compile(
            "^org\\.apache\\.kafka\\.(?:connect\\.(?:"
                    + "transforms\\.(?!Transformation|predicates\\.Predicate$).*"
                    + "|json\\..*"
                    + "|file\\..*"
                    + "|mirror\\..*"
                    + "|mirror-client\\..*"
                    + "|converters\\..*"
                    + "|storage\\.StringConverter"
                    + "|storage\\.SimpleHeaderConverter"
                    + ")$|common\\.config\\.provider\\.(?!ConfigProvider$).*"
                    + ")$");

    private final String location;

    PluginClassLoader(String location, URL[] urls, ClassLoader parent) {
        super(urls, parent);
        this.location = location;
    }

    String location() {
        return location;
    }

    static boolean loadInIsolation(String name) {
        return !PARENT_FIRST.matcher(name).matches() || ISOLATED_KAFKA.matcher(name).matches();
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        synchronized (getClassLoadingLock(name)) {
            Class<?> klass = findLoadedClass(name);
            if (klass == null && loadInIsolation(name)) {
                try {
                    klass = findClass(name);
                } catch (ClassNotFoundException e) {
                    // Not in the plugin: the parent's.
                }
            }
            if (klass == null) {
                klass = super.loadClass(name, false);
            }
            if (resolve) {
                resolveClass(klass);
            }
            return klass;
        }
    }

    @Override
    public URL getResource(String name) {
        URL url = findResource(name);
        return url != null ? url : super.getResource(name);
    }

    @Override
    public String toString() {
        return "PluginClassLoader{pluginLocation=" + location + "}";
    }
}
