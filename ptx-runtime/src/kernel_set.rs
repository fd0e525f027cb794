//! What a generated `Kernels` holds: its modules loaded on one device ([`KernelSet`]), and the
//! [`Grid`]s its typed launch methods take.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchArgs, LaunchConfig};

use crate::shared_memory::SharedLimits;
use crate::{check_launch_bounds, launched, load, Image, LaunchError, LaunchPlan, LoadError, Loaded, PlanCache, Policy};

/// How a typed launch is laid out: a configuration as given, or a grid that the launched
/// kernel's occupancy-derived [`LaunchPlan`] fills in (computed once per kernel and dynamic shared
/// memory size on the device it was loaded on, then cached).
///
/// Every typed launch method takes `impl Into<Grid>`: a cudarc [`LaunchConfig`] works as before.
/// A grid is resolved for the kernel being launched, so one kernel's configuration cannot end
/// up on another, and blocks stay within the kernel's launch bound.
#[derive(Clone, Copy, Debug)]
pub enum Grid {
    /// This configuration, as given (checked against the kernel's launch bound).
    Config(LaunchConfig),
    /// One thread per element: `ceil(n / block_size)` blocks of the plan's block size.
    Elements {
        /// Elements, one thread each.
        n: usize,
        /// Dynamic shared memory per block, in bytes.
        dynamic_shared_bytes: u32,
    },
    /// As many blocks of the plan's size as are resident on the whole device at once: the grid
    /// of a kernel with a grid-stride loop.
    Resident {
        /// Dynamic shared memory per block, in bytes.
        dynamic_shared_bytes: u32,
    },
}

impl Grid {
    /// One thread per element, blocks of the kernel's occupancy-derived size.
    pub fn elements(n: usize) -> Grid {
        Grid::Elements { n, dynamic_shared_bytes: 0 }
    }

    /// The blocks resident on the device at once (for a grid-stride loop).
    pub fn resident() -> Grid {
        Grid::Resident { dynamic_shared_bytes: 0 }
    }

    /// The same grid with `bytes` of dynamic shared memory per block; the plan accounts for it
    /// (more shared memory can mean fewer blocks an SM).
    pub fn shared(self, bytes: u32) -> Grid {
        match self {
            Grid::Config(cfg) => Grid::Config(LaunchConfig { shared_mem_bytes: bytes, ..cfg }),
            Grid::Elements { n, .. } => Grid::Elements { n, dynamic_shared_bytes: bytes },
            Grid::Resident { .. } => Grid::Resident { dynamic_shared_bytes: bytes },
        }
    }
}

impl From<LaunchConfig> for Grid {
    fn from(cfg: LaunchConfig) -> Grid {
        Grid::Config(cfg)
    }
}

/// One embedded PTX module of a generated `Kernels`: its images, the functions to resolve in
/// it, and each function's launch bound (`.maxntid`, 0 for none).
#[derive(Clone, Copy, Debug)]
pub struct EmbeddedModule {
    /// Its PTX and cubins, one per arch.
    pub images: &'static [Image],
    /// The functions a `Kernels` resolves in it.
    pub functions: &'static [&'static str],
    /// The launch bound of each function, in `functions`' order; 0 where it has none.
    pub bounds: &'static [u32],
    /// The functions that some of `images` lack (the source leaves them out for those archs):
    /// absent from the loaded image, they fail at launch. Any other function the image lacks
    /// fails the load (the image and the generated code would not be of one build).
    pub partial: &'static [&'static str],
    /// The functions that sync their whole grid (cooperative groups' `this_grid().sync()`):
    /// launched with `cuLaunchCooperativeKernel`.
    pub cooperative: &'static [&'static str],
}

/// Every module of a generated `Kernels`, loaded on one device: the functions of all modules
/// in one list (a typed method reaches its kernel by index), their launch bounds and plans.
///
/// Loading and launching live here, compiled once, rather than in each generated module:
/// written out there, loading instantiated `Vec`, iterator and drop code in every host crate
/// (0.3 s of rustc for the ten-file bench module, BENCHMARKS.md, issue 25), and a
/// `<kernel>_config` and `<kernel>_plan` method per kernel were two thirds of its functions.
#[derive(Debug, Clone)]
pub struct KernelSet {
    modules: Vec<Loaded>,
    names: Vec<&'static str>,
    bounds: Vec<u32>,
    cooperative: Vec<bool>,
    /// `None`: not in the image loaded for this GPU (`arch` of its module's image).
    functions: Vec<Option<CudaFunction>>,
    /// The arch of the image each function's module was loaded from.
    archs: Vec<&'static str>,
    plans: PlanCache,
    shared: SharedLimits,
    ctx: Arc<CudaContext>,
}

impl KernelSet {
    /// Loads each module for the context's device; every function is resolved now. One that
    /// the loaded image lacks fails the load, unless the module lists it as `partial` (its
    /// source leaves it out for some archs): that one fails only when launched, with
    /// [`LaunchError::NotInImage`].
    pub fn load(ctx: &Arc<CudaContext>, modules: &[EmbeddedModule], policy: Policy) -> Result<KernelSet, LoadError> {
        let count = modules.iter().map(|m| m.functions.len()).sum();
        let mut set = KernelSet {
            modules: Vec::with_capacity(modules.len()),
            names: Vec::with_capacity(count),
            bounds: Vec::with_capacity(count),
            cooperative: Vec::with_capacity(count),
            functions: Vec::with_capacity(count),
            archs: Vec::with_capacity(count),
            plans: PlanCache::new(ctx),
            shared: SharedLimits::new(count),
            ctx: ctx.clone(),
        };
        for m in modules {
            let module = load(ctx, m.images, policy)?;
            for (i, name) in m.functions.iter().enumerate() {
                set.functions.push(match module.function(name) {
                    Ok(f) => Some(f),
                    Err(LoadError::MissingKernel { .. }) if m.partial.contains(name) => None,
                    Err(e) => return Err(e),
                });
                set.archs.push(module.image.arch);
                set.names.push(name);
                set.bounds.push(m.bounds.get(i).copied().unwrap_or(0));
                set.cooperative.push(m.cooperative.contains(name));
            }
            set.modules.push(module);
        }
        Ok(set)
    }

    fn index(&self, name: &str) -> Result<usize, LaunchError> {
        self.names.iter().position(|n| *n == name).ok_or_else(|| LaunchError::UnknownKernel { name: name.to_string() })
    }

    /// Any loaded kernel by its PTX name, typed or not.
    pub fn function(&self, name: &str) -> Option<&CudaFunction> {
        self.index(name).ok().and_then(|i| self.functions[i].as_ref())
    }

    /// cudarc's launch builder for any loaded kernel by PTX name.
    pub fn launch_builder<'a>(&'a self, stream: &'a CudaStream, name: &str) -> Option<LaunchArgs<'a>> {
        self.function(name).map(|f| stream.launch_builder(f))
    }

    /// The image each module was loaded from, in the order they were given.
    pub fn images(&self) -> Vec<&'static Image> {
        self.modules.iter().map(|m| m.image).collect()
    }

    /// The occupancy-derived plan of kernel `name` (its PTX name) with `dynamic_shared_bytes`
    /// per block, within its launch bound.
    pub fn plan(&self, name: &str, dynamic_shared_bytes: u32) -> Result<LaunchPlan, LaunchError> {
        self.plan_at(self.index(name)?, dynamic_shared_bytes)
    }

    /// The configuration a typed launch of kernel `name` with `grid` uses.
    pub fn config(&self, name: &str, grid: impl Into<Grid>) -> Result<LaunchConfig, LaunchError> {
        self.config_at(self.index(name)?, grid.into())
    }

    /// Lets kernel `name` (its PTX name) launch with `bytes` of dynamic shared memory a block:
    /// over 48 KiB the kernel's limit must be raised first. Typed launches (and plans) do this
    /// themselves; this is for launches through cudarc's builder ([`Self::launch_builder`]).
    /// Fails, with the numbers, where the device has less shared memory than that.
    pub fn allow_dynamic_shared_memory(&self, name: &str, bytes: u32) -> Result<(), LaunchError> {
        let index = self.index(name)?;
        self.shared.ensure(&self.ctx, index, self.names[index], self.at(index)?, bytes)
    }

    fn plan_at(&self, index: usize, dynamic_shared_bytes: u32) -> Result<LaunchPlan, LaunchError> {
        // The occupancy queries count no block that needs more than the kernel's limit.
        let function = self.at(index)?;
        self.shared.ensure(&self.ctx, index, self.names[index], function, dynamic_shared_bytes)?;
        let bound = match self.bounds[index] {
            0 => u32::MAX,
            b => b,
        };
        Ok(self.plans.plan_within(index, function, dynamic_shared_bytes, bound)?)
    }

    fn config_at(&self, index: usize, grid: Grid) -> Result<LaunchConfig, LaunchError> {
        match grid {
            Grid::Config(cfg) => {
                if self.bounds[index] != 0 {
                    check_launch_bounds(self.names[index], self.bounds[index], &cfg)?;
                }
                Ok(cfg)
            }
            Grid::Elements { n, dynamic_shared_bytes } => Ok(self.plan_at(index, dynamic_shared_bytes)?.for_elements(n)?),
            Grid::Resident { dynamic_shared_bytes } => Ok(self.plan_at(index, dynamic_shared_bytes)?.resident_grid()),
        }
    }

    /// Function number `index`, in load order: for the generated typed methods.
    #[doc(hidden)]
    #[inline]
    pub fn at(&self, index: usize) -> Result<&CudaFunction, LaunchError> {
        self.functions[index].as_ref().ok_or(LaunchError::NotInImage { kernel: self.names[index], arch: self.archs[index] })
    }

    /// Launches function `index` with the arguments pushed on `args` (a builder of that
    /// function): the end of every generated typed method, one call for the grid, the bound
    /// and cudarc's result.
    ///
    /// # Safety
    /// As cudarc's `LaunchArgs::launch`: the arguments and the grid must match what the kernel
    /// reads and writes.
    #[doc(hidden)]
    pub unsafe fn launch(&self, index: usize, mut args: LaunchArgs<'_>, grid: Grid) -> Result<(), LaunchError> {
        let cfg = self.config_at(index, grid)?;
        if cfg.shared_mem_bytes > 0 {
            self.shared.ensure(&self.ctx, index, self.names[index], self.at(index)?, cfg.shared_mem_bytes)?;
        }
        // SAFETY: the caller's promise.
        if self.cooperative[index] {
            return crate::bounds::launched_cooperatively(self.names[index], &cfg, unsafe { args.launch_cooperative(cfg) });
        }
        launched(unsafe { args.launch(cfg) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_takes_shared_memory_and_a_config_as_given() {
        let cfg = LaunchConfig { grid_dim: (3, 1, 1), block_dim: (64, 2, 1), shared_mem_bytes: 0 };
        match Grid::from(cfg).shared(512) {
            Grid::Config(c) => assert_eq!((c.grid_dim, c.block_dim, c.shared_mem_bytes), ((3, 1, 1), (64, 2, 1), 512)),
            g => panic!("{g:?}"),
        }
        assert!(matches!(Grid::elements(10).shared(256), Grid::Elements { n: 10, dynamic_shared_bytes: 256 }));
        assert!(matches!(Grid::resident(), Grid::Resident { dynamic_shared_bytes: 0 }));
        assert!(matches!(Grid::resident().shared(8), Grid::Resident { dynamic_shared_bytes: 8 }));
    }
}
