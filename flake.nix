{
  description = "khub bundled kernels (rmsnorm, rope3d, geglu, adaln) built with kernel-builder";

  inputs = {
    kernel-builder.url = "github:huggingface/kernels";
  };

  outputs =
    { self, kernel-builder }:
    let
      lib = kernel-builder.inputs.nixpkgs.lib;
      names = [ "rmsnorm" "rope3d" "geglu" "adaln" ];
      # kernels/ without the CMake-built variant dirs.
      tree = builtins.path {
        name = "khub-kernels-src";
        path = ./kernels;
        filter = path: type: !(type == "directory" && baseNameOf path == "build");
      };
      # Each kernel reaches the shared headers through the symlink common -> ../common;
      # kernel-builder gets a self-contained copy with the link resolved.
      source =
        system: name:
        kernel-builder.inputs.nixpkgs.legacyPackages.${system}.runCommand "khub-kernel-${name}" { } ''
          cp -rL ${tree}/${name} $out
        '';
      outputsFor =
        system: name:
        kernel-builder.lib.genKernelFlakeOutputs {
          inherit self;
          path = source system name;
        };
      systems = [ "x86_64-linux" "aarch64-linux" ];
    in
    {
      # nix build .#rmsnorm (etc.): the kernel's bundle of variant dirs for kernel-builder's
      # compliant torch/CUDA set; .#default builds all four.
      packages = lib.genAttrs systems (
        system:
        let
          per = lib.genAttrs names (name: (outputsFor system name).packages.${system}.default);
        in
        per
        // {
          default = kernel-builder.inputs.nixpkgs.legacyPackages.${system}.linkFarm "khub-kernels" (
            lib.mapAttrsToList (name: path: { inherit name path; }) per
          );
        }
      );
    };
}
