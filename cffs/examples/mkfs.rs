//! `mkfs IMAGE --size MIB [--from DIR] [--cpio ARCHIVE] [--owner UID:GID]
//! [--no-embed] [--no-group]`: makes an XN disk with a C-FFS holding a
//! copy of DIR (files, directories, symbolic links, hard links,
//! permissions, times), or of the tree a boot archive holds under `root/`
//! (its modes and owners: Veneer's root tree, `cargo xtask run`'s disk).
//! `cargo xtask mkfs` runs it.

#[path = "common/file_disk.rs"]
mod file_disk;

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use cffs::{Fs, Local, Options, ROOT_INO};
use file_disk::FileDisk;
use xn::{Cred, HostPages, Xn};

type Cffs = Fs<Local<FileDisk>>;

struct Copy {
    owner: Option<(u32, u32)>,
    /// (device, inode) of host files seen, for hard links.
    seen: HashMap<(u64, u64), u64>,
    files: u64,
    dirs: u64,
    links: u64,
    skipped: u64,
}

fn ns(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

fn copy_dir(fs: &mut Cffs, c: &mut Copy, host: &Path, dir: u64) -> Result<(), String> {
    let mut entries: Vec<_> =
        std::fs::read_dir(host).map_err(|e| format!("{}: {e}", host.display()))?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name();
        let name = name.as_encoded_bytes();
        let md = std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let err = |x: cffs::Errno| format!("{}: {x:?}", path.display());
        let ft = md.file_type();
        let ino = if ft.is_dir() {
            let d = fs.mkdir(dir, name, md.mode()).map_err(err)?;
            copy_dir(fs, c, &path, d)?;
            c.dirs += 1;
            d
        } else if ft.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            c.files += 1;
            fs.symlink(dir, name, target.as_os_str().as_encoded_bytes()).map_err(err)?
        } else if ft.is_file() {
            if md.nlink() > 1 {
                if let Some(&ino) = c.seen.get(&(md.dev(), md.ino())) {
                    fs.link(ino, dir, name).map_err(err)?;
                    c.links += 1;
                    continue;
                }
            }
            let f = fs.create(dir, name, md.mode()).map_err(err)?;
            let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            fs.write(f, 0, &data).map_err(err)?;
            c.seen.insert((md.dev(), md.ino()), f);
            c.files += 1;
            f
        } else {
            eprintln!("mkfs: skipping {} (device, fifo or socket)", path.display());
            c.skipped += 1;
            continue;
        };
        if !ft.is_symlink() {
            let (uid, gid) = c.owner.unwrap_or((md.uid(), md.gid()));
            fs.setattr(ino, Some(md.mode()), Some((uid, gid))).map_err(err)?;
            fs.utimes(ino, ns(md.atime(), md.atime_nsec()), ns(md.mtime(), md.mtime_nsec())).map_err(err)?;
        }
    }
    Ok(())
}

/// Where a boot archive holds the root tree (`libos/src/fs/boot.rs`).
const TREE: &str = "root/";

/// Copies the members of cpio archive `ar` under `TREE`: the first of a
/// name wins (as the boot tree takes them), a missing parent directory is
/// made (mode 755).
fn copy_cpio(fs: &mut Cffs, c: &mut Copy, ar: &[u8]) -> Result<(), String> {
    use cffs::format::{S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};
    for e in binfmt::cpio::entries(ar) {
        let e = e.map_err(|x| format!("the archive: {x:?}"))?;
        let Some(rel) = e.name.strip_prefix(TREE) else {
            continue;
        };
        let err = |x: cffs::Errno| format!("{rel}: {x:?}");
        let (up, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let mut dir = ROOT_INO;
        for part in up.split('/').filter(|p| !p.is_empty()) {
            dir = match fs.lookup(dir, part.as_bytes()) {
                Ok(d) => d,
                Err(_) => fs.mkdir(dir, part.as_bytes(), S_IFDIR | 0o755).map_err(err)?,
            };
        }
        if name.is_empty() || fs.lookup(dir, name.as_bytes()).is_ok() {
            continue;
        }
        let ino = match e.mode & S_IFMT {
            S_IFDIR => {
                c.dirs += 1;
                fs.mkdir(dir, name.as_bytes(), e.mode).map_err(err)?
            }
            S_IFLNK => {
                c.files += 1;
                fs.symlink(dir, name.as_bytes(), e.data).map_err(err)?;
                continue;
            }
            S_IFREG => {
                c.files += 1;
                let f = fs.create(dir, name.as_bytes(), e.mode).map_err(err)?;
                fs.write(f, 0, e.data).map_err(err)?;
                f
            }
            _ => {
                c.skipped += 1;
                continue;
            }
        };
        let owner = c.owner.unwrap_or((e.uid, e.gid));
        fs.setattr(ino, Some(e.mode), Some(owner)).map_err(err)?;
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("mkfs: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let image =
        args.first().filter(|a| !a.starts_with("--")).ok_or("usage: mkfs IMAGE --size MIB [--from DIR]")?;
    let mib: u64 = opt("--size").unwrap_or_else(|| "64".into()).parse().map_err(|_| "bad --size")?;
    let owner = match opt("--owner") {
        Some(o) => {
            let (u, g) = o.split_once(':').ok_or("--owner UID:GID")?;
            Some((u.parse().map_err(|_| "bad uid")?, g.parse().map_err(|_| "bad gid")?))
        }
        None => None,
    };
    let opts = Options {
        embed: !args.iter().any(|a| a == "--no-embed"),
        group: !args.iter().any(|a| a == "--no-group"),
    };
    let file = std::fs::File::create(image).map_err(|e| format!("{image}: {e}"))?;
    file.set_len(mib << 20).map_err(|e| format!("{image}: {e}"))?;
    drop(file);
    let mut disk = FileDisk::open(image)?;
    Xn::<FileDisk, HostPages>::format(&mut disk).map_err(|e| format!("XN format: {e:?}"))?;
    let local = Local::mount(disk, 1, Cred::new(0, 0)).map_err(|e| format!("XN mount: {e:?}"))?;
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
    let mut fs = Fs::mkfs(local, opts, now).map_err(|e| format!("mkfs: {e:?}"))?;
    let mut c = Copy { owner, seen: HashMap::new(), files: 0, dirs: 0, links: 0, skipped: 0 };
    if let Some(from) = opt("--from") {
        copy_dir(&mut fs, &mut c, Path::new(&from), ROOT_INO)?;
    }
    if let Some(ar) = opt("--cpio") {
        let bytes = std::fs::read(&ar).map_err(|e| format!("{ar}: {e}"))?;
        copy_cpio(&mut fs, &mut c, &bytes)?;
    }
    fs.sync().map_err(|e| format!("sync: {e:?}"))?;
    let st = fs.statfs();
    println!(
        "mkfs: {image}: {} MiB, {} files, {} directories, {} hard links, {} skipped; {} of {} blocks used ({:?})",
        mib,
        c.files,
        c.dirs,
        c.links,
        c.skipped,
        st.blocks - st.bfree,
        st.blocks,
        opts
    );
    Ok(())
}
