package io.connectrs.pluginhost;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.source.SourceConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the connectors of {@code plugin.path} with Apache's layout rules: each entry of the path
 * is a directory of plugins or a plugin itself (a jar, or a directory of jars and classes). Each
 * plugin gets its own {@link PluginClassLoader}.
 *
 * <p>Connectors are found through their {@code META-INF/services} manifests (Apache's
 * {@code service_load}); a plugin without any connector manifest is scanned class by class
 * (Apache's reflective scan), so older plugins are found too.
 */
final class PluginScanner {
    private static final Logger log = LoggerFactory.getLogger(PluginScanner.class);

    /** One connector class found. */
    record Found(String className, String type, String version, String taskClass,
                 PluginClassLoader loader) {}

    final List<Found> found = new ArrayList<>();
    /** A converter, header converter, transformation or predicate class found. */
    record Other(String className, String type, String version, PluginClassLoader loader) {}

    /** Converters, header converters, transformations and predicates. */
    final List<Other> others = new ArrayList<>();
    /** {@code type + " " + class} of {@link #others}, so a class found twice is listed once. */
    private final java.util.Set<String> otherKeys = new java.util.HashSet<>();
    final List<String> errors = new ArrayList<>();

    /** Apache's {@code plugin.discovery}: only_scan, hybrid_warn, hybrid_fail, service_load. */
    private String discovery = "hybrid_warn";
    /** Plugins whose connectors were found by scanning only (no manifest): hybrid_fail's error. */
    final List<String> withoutManifests = new ArrayList<>();

    void scan(List<String> pluginPath, String discovery) {
        this.discovery = discovery;
        scan(pluginPath);
    }

    void scan(List<String> pluginPath) {
        for (String entry : pluginPath) {
            Path path = Path.of(entry.trim());
            if (!Files.exists(path)) {
                errors.add("plugin.path entry " + path + " does not exist");
                continue;
            }
            if (isArchive(path)) {
                scanPlugin(path);
                continue;
            }
            // A directory: each child is a plugin; loose jars/classes directly in it form one
            // plugin per jar (Apache treats a jar directly in the path as its own plugin).
            try (Stream<Path> children = Files.list(path)) {
                List<Path> sorted = children.sorted().toList();
                boolean hasClasses = sorted.stream().anyMatch(p -> p.toString().endsWith(".class"));
                if (hasClasses) {
                    scanPlugin(path);
                    continue;
                }
                for (Path child : sorted) {
                    if (Files.isDirectory(child) || isArchive(child)) {
                        scanPlugin(child);
                    }
                }
            } catch (IOException e) {
                errors.add("could not list plugin.path entry " + path + ": " + e);
            }
        }
    }

    private static boolean isArchive(Path p) {
        String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
        return Files.isRegularFile(p) && (name.endsWith(".jar") || name.endsWith(".zip"));
    }

    private void scanPlugin(Path location) {
        List<URL> urls = new ArrayList<>();
        try {
            if (Files.isDirectory(location)) {
                urls.add(location.toUri().toURL());
                try (Stream<Path> walk = Files.walk(location)) {
                    for (Path p : walk.sorted().toList()) {
                        if (isArchive(p)) {
                            urls.add(p.toUri().toURL());
                        }
                    }
                }
            } else {
                urls.add(location.toUri().toURL());
            }
        } catch (IOException e) {
            errors.add("could not read plugin " + location + ": " + e);
            return;
        }
        PluginClassLoader loader = new PluginClassLoader(
                location.toString(), urls.toArray(new URL[0]), PluginHost.class.getClassLoader());
        int before = found.size();
        boolean manifests = false;
        if (!discovery.equals("only_scan")) {
            manifests = serviceLoad(loader, SourceConnector.class, "source")
                    | serviceLoad(loader, SinkConnector.class, "sink");
        }
        if (!manifests && !discovery.equals("service_load")) {
            reflectiveScan(loader, urls);
            if (found.size() > before && !discovery.equals("only_scan")) {
                withoutManifests.add(location.toString());
                log.warn("plugin {} has connectors without META-INF/services manifests; "
                        + "plugin.discovery=service_load would not find them", location);
            }
        }
        listServices(loader, org.apache.kafka.connect.storage.Converter.class, "converter");
        listServices(loader, org.apache.kafka.connect.storage.HeaderConverter.class, "header_converter");
        listServices(loader, org.apache.kafka.connect.transforms.Transformation.class, "transformation");
        listServices(loader, org.apache.kafka.connect.transforms.predicates.Predicate.class, "predicate");
        log.info("plugin {}: {} connector(s)", location, found.size() - before);
    }

    private boolean serviceLoad(PluginClassLoader loader, Class<? extends Connector> kind, String type) {
        boolean any = false;
        ServiceLoader<? extends Connector> services = ServiceLoader.load(kind, loader);
        var it = services.stream().iterator();
        while (true) {
            ServiceLoader.Provider<? extends Connector> provider;
            try {
                if (!it.hasNext()) {
                    break;
                }
                provider = it.next();
            } catch (Throwable t) {
                errors.add("plugin " + loader.location() + ": a " + type + " connector manifest names a class that does not load: " + t);
                continue;
            }
            if (provider.type().getClassLoader() != loader) {
                continue; // a manifest of the host's own class path
            }
            any = true;
            add(loader, provider.type(), type);
        }
        return any;
    }

    /** Classes of the plugin's manifests for `kind`, without instantiating them. */
    private void listServices(PluginClassLoader loader, Class<?> kind, String type) {
        var it = ServiceLoader.load(kind, loader).stream().iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    return;
                }
                Class<?> klass = it.next().type();
                if (klass.getClassLoader() == loader) {
                    addOther(loader, klass, type);
                }
            } catch (Throwable t) {
                errors.add("plugin " + loader.location() + ": a " + type + " manifest names a class that does not load: " + t);
            }
        }
    }

    private void reflectiveScan(PluginClassLoader loader, List<URL> urls) {
        for (URL url : urls) {
            File file = new File(url.getPath());
            if (!file.isFile()) {
                continue;
            }
            try (JarFile jar = new JarFile(file)) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    String name = entries.nextElement().getName();
                    if (!name.endsWith(".class") || name.startsWith("META-INF")) {
                        continue;
                    }
                    // Nested classes may be transformations (Apache's `InsertField$Value`), not
                    // connectors.
                    boolean nested = name.contains("$");
                    String className = name.substring(0, name.length() - 6).replace('/', '.');
                    Class<?> klass;
                    try {
                        klass = Class.forName(className, false, loader);
                    } catch (Throwable t) {
                        continue;
                    }
                    if (klass.getClassLoader() != loader) {
                        continue;
                    }
                    if (!nested && SourceConnector.class.isAssignableFrom(klass)) {
                        add(loader, klass, "source");
                    } else if (!nested && SinkConnector.class.isAssignableFrom(klass)) {
                        add(loader, klass, "sink");
                    }
                    for (var kind : OTHER_KINDS.entrySet()) {
                        if (kind.getKey().isAssignableFrom(klass)) {
                            addOther(loader, klass, kind.getValue());
                        }
                    }
                }
            } catch (IOException e) {
                errors.add("could not read " + file + ": " + e);
            }
        }
    }

    /** The plugin interfaces besides connectors, and their Connect plugin types. */
    private static final java.util.Map<Class<?>, String> OTHER_KINDS = java.util.Map.of(
            org.apache.kafka.connect.storage.Converter.class, "converter",
            org.apache.kafka.connect.storage.HeaderConverter.class, "header_converter",
            org.apache.kafka.connect.transforms.Transformation.class, "transformation",
            org.apache.kafka.connect.transforms.predicates.Predicate.class, "predicate");

    /**
     * A converter, header converter, transformation or predicate: its version is the
     * {@code version()} of a fresh instance when it is {@code Versioned} (as Apache's
     * {@code PluginUtils.versionFor}), else "undefined". A class that cannot be instantiated is
     * an error of the scan, as Apache's.
     */
    private void addOther(PluginClassLoader loader, Class<?> klass, String type) {
        int mods = klass.getModifiers();
        if (Modifier.isAbstract(mods) || Modifier.isInterface(mods) || !Modifier.isPublic(mods)
                || (klass.getEnclosingClass() != null && !Modifier.isStatic(mods))) {
            return;
        }
        if (!otherKeys.add(type + " " + klass.getName())) {
            return;
        }
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(loader);
        try {
            Object instance = klass.getDeclaredConstructor().newInstance();
            String version = "undefined";
            if (instance instanceof org.apache.kafka.connect.components.Versioned v) {
                try {
                    version = v.version();
                } catch (Throwable t) {
                    version = "undefined";
                }
            }
            others.add(new Other(klass.getName(), type, version == null ? "undefined" : version, loader));
            if (instance instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Throwable ignored) {
                    // An instance made only to ask its version.
                }
            }
        } catch (Throwable t) {
            errors.add("plugin " + loader.location() + ": " + type.replace('_', ' ') + " class " + klass.getName()
                    + " could not be instantiated: " + t);
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    private void add(PluginClassLoader loader, Class<?> klass, String type) {
        if (Modifier.isAbstract(klass.getModifiers()) || !Modifier.isPublic(klass.getModifiers())) {
            return;
        }
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(loader);
        try {
            Connector c = (Connector) klass.getDeclaredConstructor().newInstance();
            String version;
            try {
                version = c.version();
            } catch (Throwable t) {
                version = "undefined";
            }
            String taskClass = c.taskClass().getName();
            found.add(new Found(klass.getName(), type, version == null ? "undefined" : version, taskClass, loader));
        } catch (Throwable t) {
            errors.add("plugin " + loader.location() + ": connector class " + klass.getName() + " could not be instantiated: " + t);
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }
}
